//! Placing tasks with periodic demand on machines (the heuristics of `lakehouse.models.packing`).
//!
//! Why compiled: each placement scans every open machine, and the searches of MM try a dozen machine
//! counts; 22,600 tasks on ~2,100 machines is ~5·10^8 peak evaluations per packing campaign step.
//!
//! A machine is (sum C, sum rho cos phi, sum rho sin phi); its peak is sum C + |phasor sum|.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The lowest-index machine where the task fits (FFD); else a new machine.
    First,
    /// The machine whose peak after adding the task is largest but fits (BFD); else a new machine.
    Best,
    /// The machine whose peak after adding the task is smallest (MM); with a fixed number of machines.
    Least,
}

const EPS: f64 = 1e-9;

/// Machine of each task, in input order; `None` when `machines` is fixed and a task fits nowhere.
pub fn place(
    c: &[f64],
    dx: &[f64],
    dy: &[f64],
    capacity: f64,
    rule: Rule,
    machines: Option<usize>,
) -> Option<Vec<i64>> {
    // The peak loop is the whole cost.  The extension is built for baseline x86-64 (two square
    // roots per instruction); where the CPU has AVX2 the same loop compiled for it takes four.  The
    // arithmetic is the same (additions, multiplications and correctly rounded square roots, never
    // fused), so the packing does not depend on the machine it ran on.
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { place_avx2(c, dx, dy, capacity, rule, machines) };
    }
    place_with_any_cpu(c, dx, dy, capacity, rule, machines)
}

// The same signature as `place` on purpose: `target_feature` applies to a whole function, so the
// AVX2 build of the loop needs an item of its own that the dispatch above can call.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn place_avx2(
    c: &[f64],
    dx: &[f64],
    dy: &[f64],
    capacity: f64,
    rule: Rule,
    machines: Option<usize>,
) -> Option<Vec<i64>> {
    place_with_any_cpu(c, dx, dy, capacity, rule, machines)
}

#[inline(always)]
fn place_with_any_cpu(
    c: &[f64],
    dx: &[f64],
    dy: &[f64],
    capacity: f64,
    rule: Rule,
    machines: Option<usize>,
) -> Option<Vec<i64>> {
    let mut s: Vec<f64> = vec![0.0; machines.unwrap_or(0)];
    let mut x = s.clone();
    let mut y = s.clone();
    let mut out = Vec::with_capacity(c.len());
    let mut peaks: Vec<f64> = Vec::new();
    for i in 0..c.len() {
        // Peaks after adding the task, for every machine, in a loop the compiler vectorizes (sqrt of
        // the squared modulus rather than hypot, which is several times slower and guards against
        // overflows that normalized demands cannot reach).
        peaks.resize(s.len(), 0.0);
        let (ci, dxi, dyi) = (c[i], dx[i], dy[i]);
        for (((peak, s), x), y) in peaks.iter_mut().zip(&s).zip(&x).zip(&y) {
            let (px, py) = (x + dxi, y + dyi);
            *peak = s + ci + (px * px + py * py).sqrt();
        }
        let limit = capacity + EPS;
        let choice: Option<usize> = match rule {
            Rule::First => peaks.iter().position(|&p| p <= limit),
            Rule::Best => pick(&peaks, limit, |p, q| p > q),
            Rule::Least => pick(&peaks, limit, |p, q| p < q),
        };
        let k = match (choice, machines) {
            (Some(k), _) => k,
            (None, Some(_)) => return None,
            (None, None) => {
                s.push(0.0);
                x.push(0.0);
                y.push(0.0);
                s.len() - 1
            }
        };
        s[k] += c[i];
        x[k] += dx[i];
        y[k] += dy[i];
        out.push(k as i64);
    }
    Some(out)
}

/// Index of the machine whose peak fits and is preferred by `better` (first one among equals).
#[inline(always)]
fn pick(peaks: &[f64], limit: f64, better: impl Fn(f64, f64) -> bool) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (k, &p) in peaks.iter().enumerate() {
        if p <= limit && best.is_none_or(|(_, q)| better(p, q)) {
            best = Some((k, p));
        }
    }
    best.map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposite_phases_share_a_machine() {
        // Two tasks C = 10, rho = 5, phases 0 and pi: 20 + |5 - 5| = 20 fits a capacity of 20.
        let (c, dx, dy) = ([10.0, 10.0], [5.0, -5.0], [0.0, 0.0]);
        assert_eq!(
            place(&c, &dx, &dy, 20.0, Rule::First, None),
            Some(vec![0, 0])
        );
        // In phase: 30 > 20, two machines; MM with one machine fails.
        let same = [5.0, 5.0];
        assert_eq!(
            place(&c, &same, &dy, 20.0, Rule::First, None),
            Some(vec![0, 1])
        );
        assert_eq!(place(&c, &same, &dy, 20.0, Rule::Least, Some(1)), None);
    }

    #[test]
    fn every_cpu_packs_alike() {
        // `place` takes the AVX2 loop where the CPU has it; the portable one must give the same
        // machines, task for task, or results would depend on the machine they ran on.
        let mut state = 7u64;
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let n = 3_000;
        let c: Vec<f64> = (0..n).map(|_| 0.2 + 3.0 * uniform()).collect();
        let (mut dx, mut dy) = (Vec::new(), Vec::new());
        for &level in &c {
            let (rho, phi) = (level * uniform(), std::f64::consts::TAU * uniform());
            dx.push(rho * phi.cos());
            dy.push(rho * phi.sin());
        }
        for (rule, machines) in [
            (Rule::First, None),
            (Rule::Best, None),
            (Rule::Least, Some(330)),
        ] {
            let dispatched = place(&c, &dx, &dy, 20.0, rule, machines);
            assert!(dispatched.is_some(), "{rule:?} packs the instance");
            assert_eq!(
                dispatched,
                place_with_any_cpu(&c, &dx, &dy, 20.0, rule, machines),
                "{rule:?}"
            );
        }
    }

    #[test]
    fn best_fills_and_least_spreads() {
        // Machines loaded 12 and 5 (constant demands); a task of 3 goes to 0 (best) or 1 (least).
        let (c, z) = ([12.0, 5.0, 3.0], [0.0; 3]);
        assert_eq!(
            place(&c, &z, &z, 20.0, Rule::Least, Some(2)),
            Some(vec![0, 1, 1])
        );
        let best = place(&c, &z, &z, 20.0, Rule::Best, None).unwrap();
        assert_eq!(best, vec![0, 0, 0]);
    }
}
