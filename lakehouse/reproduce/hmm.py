"""The workload HMM's stays against a geometric law (the same thesis, Table 3.1)."""

from __future__ import annotations

from lakehouse.base.lake import Lake
from lakehouse.base.published import Published
from lakehouse.reproduce.study import (
    MEASURED,
    Request,
    Study,
    by_log,
    lacking,
    row,
)

#: Table 3.1's rounds bound: the thesis runs Baum-Welch until no parameter moves by 1e-5 (L-infinity).
HMM_ROUNDS = 10_000


def _hmm(lake: Lake, rows: list[Published], request: Request) -> list[dict[str, object]]:
    """Table 3.1: the model fitted to the whole log with the caption's settings, its Viterbi path cut
    into stays, and each state's stays against their geometric law (`models.hmm.stay_divergences`).
    States are numbered as the static initial values number them: state i starts on the i-th band of
    run-time bins, shortest first (the thesis' Algorithm 3)."""
    from lakehouse.models.hmm.model import HmmSettings, Init, Stop, whole_trace
    from lakehouse.models.job_bins import log_jobs

    out: list[dict[str, object]] = []
    for log, mine in by_log(rows, lake.log_names()):
        if log is None:
            out += [row(p, None, None, lacking(p)) for p in mine]
            continue
        s = mine[0].settings()  # (one model per log: the caption's settings are every row's)
        settings = HmmSettings(
            states=int(s["states"]),
            submit_bin=float(s["t_s"]),
            runtime_ratio=float(s["t_r"]),
            init=Init.static,
            band=float(s["band"]),
            stop=Stop(s["stop"]),
            epsilon=float(s["epsilon"]),
            per_job=False,
            rounds=HMM_ROUNDS,
        )
        jobs = log_jobs(lake, log).jobs
        model = whole_trace(jobs["submit_time"].to_numpy(), jobs["run_time"].to_numpy(), settings)
        divergences = {row["state"]: row for row in model.divergences().iter_rows(named=True)}
        rounds = f"{model.fit.rounds} Baum-Welch rounds" + ("" if model.fit.converged else ", not converged")
        for p in mine:
            state = divergences[int(p.settings()["state"])]
            value = state[f"kl_{p.settings()['estimator']}"]
            note = f"{MEASURED} ({rounds}; {state['stays']} stays)" if value is not None else "the state has no stay"
            out.append(row(p, log, value, note))
    return out


STUDY = Study(
    "hmm",
    _hmm,
    (
        "Nissimov and Feitelson, 2006, table 3.1: how far each state's stays on the Viterbi path are from a "
        "geometric law, in bits, three ways, for the workload HMM fitted to the whole SDSC-Paragon 1995 log with "
        "the caption's settings: 16 states, t_s = 1.5 h, t_r = 1.8, Static-IV, until no parameter moves by 1e-5; "
        "states are numbered by the band of run times they start on, shortest first, as the thesis numbers them"
    ),
    order=20,
    citation=(
        "A. Nissimov (D. Feitelson), Locality and its usage in parallel job runtime distribution "
        "modeling using HMM, MSc thesis, Hebrew University, 2006, chapter 3"
    ),
    last_digit_only=True,
)
