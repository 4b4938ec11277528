//! Named orders from the literature.

/// Named orders from the literature, each as the formula it stands for and where it comes from.
pub const PRESETS: &[(&str, &str, &str)] = &[
    (
        "wfp3",
        "max:(w/r)^3*n",
        "WFP3: Tang, Lan, Desai, Buettner, \"Fault-aware, utility-based job scheduling on Blue Gene/P \
         systems\", IEEE Cluster 2009",
    ),
    (
        "unicef",
        "max:w/(log2(max(n,2))*r)",
        "UNICEF: Vasupongayya, Chiang, Massey, \"Search-based job scheduling for parallel computer \
         workloads\", IEEE Cluster 2005 (w / (log2(n) r); one-processor jobs are counted as two, \
         where log2(1) = 0 would make every key infinite)",
    ),
    (
        "f1",
        "min:log10(r)*n+870*log10(s)",
        "F1: Carastan-Santos, de Camargo, \"Obtaining dynamic scheduling policies with simulation and \
         machine learning\", SC'17",
    ),
    (
        "f2",
        "min:sqrt(r)*n+25600*log10(s)",
        "F2: Carastan-Santos, de Camargo, SC'17",
    ),
    (
        "f3",
        "min:r*n+6860000*log10(s)",
        "F3: Carastan-Santos, de Camargo, SC'17",
    ),
    (
        "f4",
        "min:r*sqrt(n)+530000*log10(s)",
        "F4: Carastan-Santos, de Camargo, SC'17",
    ),
];

/// A preset's formula text, if `name` is one.
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS
        .iter()
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, text, _)| text)
}
