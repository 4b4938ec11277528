//! The workload HMM trained online during a replay: each waiting job's run-time law.
//!
//! The model is the one of `lakehouse report hmm` (states over submit bins of `bin` seconds emitting
//! the counts of jobs per run-time bin of ratio `ratio`), trained on what the scheduler knows at the
//! time: every `update` seconds, a few Baum-Welch rounds over the last `window` seconds of submit bins,
//! where a completed job is an observation of its run-time bin and a running job one of "ran at least
//! this long" (its survival: any bin from the one of its elapsed time up), and waiting jobs say
//! nothing yet.  The rounds start from the previous parameters, or from the initial values again
//! (with four times the rounds) each time the completed jobs have doubled since the last restart:
//! uniform start, each state's emission favouring its own band of run-time bins, transitions that
//! stay put with probability 0.9 (see `sticky`).  A waiting job's law is its state posterior at its submit bin (carried forward by the
//! transitions past the last update) times the states' emissions, capped at its requested time.
//! Before the first update a job's law is one event at its request, as in EASY.

use super::distribution::Law;
use crate::hmm::forward_backward;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HmmParams {
    pub states: usize,
    /// Submit bin, seconds.
    pub bin: i64,
    /// Run-time bin ratio.
    pub ratio: f64,
    /// Baum-Welch rounds per update (four times as many at a restart).
    pub rounds: usize,
    /// Seconds between updates.
    pub update: i64,
    /// Seconds of submit bins each update trains on.
    pub window: i64,
    /// How much likelier a state's own band of run-time bins is in the initial emissions (the
    /// thesis' Static-IV: 2).
    pub band: f64,
    /// Baum-Welch also sees the running jobs (as "ran at least this long").  Off: it trains on
    /// terminated jobs only, on the submit bins before the first job still in the system (the
    /// thesis' predictor); the running jobs then only inform each law, by one pass over every bin
    /// with the trained parameters.
    pub running: bool,
    /// Seconds from the first submission during which no law is given (one event at the request, as
    /// in EASY), and after which the first update waits for every job submitted in them to end.
    pub warmup: i64,
    /// 0: `rounds` rounds per update.  Above 0: rounds until sqrt(terminated jobs trained on) times the
    /// L1 change of the parameters falls below it (the thesis: 200), at most `MAX_ROUNDS`.
    pub converge: f64,
    /// The probability rule decides every candidate, those EASY backfills by the requests too (the
    /// thesis changes "only the backfilling condition").  Off: EASY's backfills are kept and the rule
    /// only adds jobs EASY refuses (docs/hmm.md says why).
    pub every: bool,
    /// Initial transitions: the probability of staying in a state (see `sticky`); 0 for uniform
    /// transitions, the thesis' initial values (`stay=uniform`).
    pub stay: f64,
    /// With `converge`: the most rounds an update runs (the thesis: until convergence).
    pub maxrounds: usize,
    /// The thesis' update rule: an update re-estimates only when sqrt(terminated jobs) times the L1
    /// change of the last round it ran has reached `converge` again (more jobs since), from the
    /// previous parameters, never from the initial values again; every update still refreshes the
    /// state posteriors.  Off: every update re-estimates (restarting as the module says).
    pub rule: bool,
}

impl Default for HmmParams {
    fn default() -> Self {
        HmmParams {
            states: 8,
            bin: 900,
            ratio: 1.8,
            rounds: 5,
            update: 86_400,
            window: 30 * 86_400,
            band: 4.0,
            running: true,
            warmup: 0,
            converge: 0.0,
            every: false,
            stay: 0.9,
            maxrounds: 100,
            rule: false,
        }
    }
}

const KEYS: [&str; 14] = [
    "states",
    "bin",
    "ratio",
    "rounds",
    "update",
    "window",
    "band",
    "running",
    "warmup",
    "converge",
    "every",
    "stay",
    "maxrounds",
    "rule",
];

impl std::str::FromStr for HmmParams {
    type Err = String;

    /// `key=value` pairs separated by commas (keys: states, bin, ratio, rounds, update, window, band,
    /// running, warmup, converge, every, stay, maxrounds, rule).
    fn from_str(text: &str) -> Result<Self, String> {
        let mut p = HmmParams::default();
        for (key, value) in super::parameters::pairs(text, "hmm parameter", &KEYS)? {
            let whole = || -> Result<i64, String> {
                value
                    .parse::<i64>()
                    .ok()
                    .filter(|&v| v >= 1)
                    .ok_or_else(|| {
                        format!("hmm parameter {key} must be a whole number >= 1, not {value:?}")
                    })
            };
            match key {
                "states" => p.states = whole()? as usize,
                "bin" => p.bin = whole()?,
                "rounds" => p.rounds = whole()? as usize,
                "maxrounds" => p.maxrounds = whole()? as usize,
                "stay" => {
                    p.stay = if value == "uniform" {
                        0.0
                    } else {
                        value
                            .parse::<f64>()
                            .ok()
                            .filter(|v| *v > 0.0 && *v < 1.0)
                            .ok_or_else(|| {
                                format!("hmm parameter stay must be uniform or a probability between 0 and 1, not {value:?}")
                            })?
                    }
                }
                "update" => p.update = whole()?,
                "window" => p.window = whole()?,
                "warmup" => {
                    p.warmup = value.parse::<i64>().ok().filter(|&v| v >= 0).ok_or_else(|| {
                        format!("hmm parameter warmup must be a whole number of seconds >= 0, not {value:?}")
                    })?
                }
                "running" | "every" | "rule" => {
                    let flag = match value {
                        "1" => true,
                        "0" => false,
                        _ => return Err(format!("hmm parameter {key} must be 0 or 1, not {value:?}")),
                    };
                    match key {
                        "running" => p.running = flag,
                        "every" => p.every = flag,
                        _ => p.rule = flag,
                    }
                }
                "band" | "converge" => {
                    let least = if key == "band" { 1.0 } else { 0.0 };
                    let number = value
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= least)
                        .ok_or_else(|| {
                            format!("hmm parameter {key} must be a number >= {least}, not {value:?}")
                        })?;
                    if key == "band" {
                        p.band = number
                    } else {
                        p.converge = number
                    }
                }
                _ => {
                    p.ratio = value
                        .parse::<f64>()
                        .ok()
                        .filter(|r| r.is_finite() && *r > 1.0)
                        .ok_or_else(|| {
                            format!("hmm parameter ratio must be a number above 1, not {value:?}")
                        })?
                }
            }
        }
        if p.rule && p.converge == 0.0 {
            return Err(
                "hmm parameter rule=1 needs converge (the threshold the rule compares with)".into(),
            );
        }
        if p.states > 64 {
            return Err(format!(
                "hmm parameter states is at most 64, not {}",
                p.states
            ));
        }
        Ok(p)
    }
}

impl std::fmt::Display for HmmParams {
    /// Every parameter, in a fixed order (the canonical spelling); the later ones only where they
    /// differ from their defaults, so that the spelling of earlier runs (stored in campaigns) stays.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "states={},bin={},ratio={},rounds={},update={},window={}",
            self.states, self.bin, self.ratio, self.rounds, self.update, self.window
        )?;
        let d = HmmParams::default();
        if self.band != d.band {
            write!(f, ",band={}", self.band)?;
        }
        if self.running != d.running {
            write!(f, ",running={}", u8::from(self.running))?;
        }
        if self.warmup != d.warmup {
            write!(f, ",warmup={}", self.warmup)?;
        }
        if self.converge != d.converge {
            write!(f, ",converge={}", self.converge)?;
        }
        if self.every != d.every {
            write!(f, ",every={}", u8::from(self.every))?;
        }
        if self.stay != d.stay {
            if self.stay == 0.0 {
                write!(f, ",stay=uniform")?;
            } else {
                write!(f, ",stay={}", self.stay)?;
            }
        }
        if self.maxrounds != d.maxrounds {
            write!(f, ",maxrounds={}", self.maxrounds)?;
        }
        if self.rule != d.rule {
            write!(f, ",rule={}", u8::from(self.rule))?;
        }
        Ok(())
    }
}

/// Initial transitions that stay put with probability `stay` (by default 0.9; 0: uniform, the thesis'
/// initial values).  Uniform transitions (the offline model's static start) are a fixed point of
/// Baum-Welch whenever consecutive bins are rarely both busy, as in the sparse windows of an online
/// update: the posteriors of neighbouring bins are then independent, so the re-estimated rows stay
/// equal and the model never learns that regimes last.
fn sticky(n: usize, stay: f64) -> Vec<f64> {
    if n == 1 {
        return vec![1.0];
    }
    if stay == 0.0 {
        return vec![1.0 / n as f64; n * n];
    }
    let other = (1.0 - stay) / (n - 1) as f64;
    (0..n * n)
        .map(|k| if k / n == k % n { stay } else { other })
        .collect()
}

/// Run-time bin of a duration: floor(ln(max(d, 1)) / ln(ratio)), below 1.5 s in the bin of 1 s.
pub fn runtime_bin(d: f64, ratio: f64) -> usize {
    if d < 1.5 {
        return 0;
    }
    // The nudge keeps exact powers of the ratio in their own bin despite rounding.
    (d.ln() / ratio.ln() + 1e-9).floor().max(0.0) as usize
}

/// Survival of each state from each run-time bin: S_s(b) = Σ_{c >= b} θ_sc (states x (bins + 1)).
fn survival_of(emis: &[f64], n: usize, k: usize) -> Vec<f64> {
    let mut survival = vec![0.0; n * (k + 1)];
    for s in 0..n {
        for c in (0..k).rev() {
            survival[s * (k + 1) + c] = survival[s * (k + 1) + c + 1] + emis[s * k + c];
        }
    }
    survival
}

/// Log-likelihood of each step's observations in each state: its completed jobs' bins, and its
/// censored jobs' "at least this bin" (steps x states).
fn log_observations(
    counts: &[f64],
    censored: &[(usize, usize)],
    steps: usize,
    n: usize,
    k: usize,
    emis: &[f64],
    survival: &[f64],
) -> Vec<f64> {
    let log_emis: Vec<f64> = emis.iter().map(|e| e.ln()).collect();
    let mut log_b = vec![0.0; steps * n];
    for t in 0..steps {
        let row = &counts[t * k..(t + 1) * k];
        for s in 0..n {
            let mut v = 0.0;
            for (c, &x) in row.iter().enumerate() {
                if x > 0.0 {
                    v += x * log_emis[s * k + c];
                }
            }
            log_b[t * n + s] = v;
        }
    }
    for &(t, b) in censored.iter().filter(|&&(t, _)| t < steps) {
        for s in 0..n {
            log_b[t * n + s] += survival[s * (k + 1) + b].ln();
        }
    }
    log_b
}

struct Model {
    start: Vec<f64>,
    trans: Vec<f64>,
    /// states x columns
    emis: Vec<f64>,
    /// Submit bin of the first step trained on, and of the last.
    first: i64,
    last: i64,
    /// State posteriors of the trained steps, steps x states.
    gamma: Vec<f64>,
}

pub struct OnlineHmm {
    p: HmmParams,
    /// Run-time bins: enough for the longest request.
    columns: usize,
    model: Option<Model>,
    next_update: i64,
    first_submit: i64,
    completed: usize,
    completed_at_restart: usize,
    /// The L1 change of the last round the last re-estimation ran (for `rule`).
    last_change: f64,
    /// Run-time bin of each completed job.
    done_bin: Vec<Option<u16>>,
}

/// What the model needs to know about the jobs at an update.
pub struct Known<'a> {
    pub submit: &'a [i64],
    /// Start time of each job (negative: not started).
    pub start: &'a [i64],
}

impl OnlineHmm {
    pub fn new(p: HmmParams, jobs: usize, longest_request: i64, first_submit: i64) -> OnlineHmm {
        let columns = runtime_bin(longest_request.max(1) as f64, p.ratio) + 1;
        OnlineHmm {
            p,
            columns,
            model: None,
            next_update: first_submit + p.update.max(p.warmup),
            first_submit,
            completed: 0,
            completed_at_restart: 0,
            last_change: f64::INFINITY,
            done_bin: vec![None; jobs],
        }
    }

    pub fn completed(&mut self, job: usize, run: i64) {
        let k = runtime_bin(run as f64, self.p.ratio).min(self.columns - 1);
        self.done_bin[job] = Some(k as u16);
        self.completed += 1;
    }

    /// Train if an update is due at `now`.
    pub fn maybe_update(&mut self, now: i64, known: &Known) {
        if now < self.next_update {
            return;
        }
        while self.next_update <= now {
            self.next_update += self.p.update;
        }
        if self.completed == 0 || !self.warmed_up(known) {
            return;
        }
        let restart = self.model.is_none()
            || (!self.p.rule && self.completed >= 2 * self.completed_at_restart.max(1));
        if restart {
            self.completed_at_restart = self.completed;
        }
        self.train(now, known, restart);
    }

    /// Every job submitted during the warm-up has ended (always, without one).
    fn warmed_up(&self, known: &Known) -> bool {
        if self.p.warmup == 0 {
            return true;
        }
        let end = self.first_submit + self.p.warmup;
        let during = known.submit.partition_point(|&s| s < end);
        self.done_bin[..during].iter().all(Option::is_some)
    }

    fn static_emissions(&self) -> Vec<f64> {
        let (n, k) = (self.p.states, self.columns);
        let mut emis = vec![1.0; n * k];
        for s in 0..n {
            let lo = s * k / n;
            let hi = ((s + 1) * k / n).max(lo + 1).min(k);
            for c in lo..hi {
                emis[s * k + c] = self.p.band;
            }
            let sum: f64 = emis[s * k..(s + 1) * k].iter().sum();
            emis[s * k..(s + 1) * k].iter_mut().for_each(|e| *e /= sum);
        }
        emis
    }

    fn train(&mut self, now: i64, known: &Known, restart: bool) {
        let (n, k, bin) = (self.p.states, self.columns, self.p.bin);
        let last = now.div_euclid(bin);
        let first = (now - self.p.window)
            .div_euclid(bin)
            .max(known.submit.first().map_or(last, |s| s.div_euclid(bin)));
        let steps = (last - first + 1) as usize;
        // Jobs submitted in the window (the workload is in submit order) up to now.
        let lo = known.submit.partition_point(|&s| s.div_euclid(bin) < first);
        let hi = known.submit.partition_point(|&s| s <= now);
        let mut counts = vec![0.0; steps * k];
        let mut censored: Vec<(usize, usize)> = Vec::new(); // (step, lowest possible bin)
                                                            // Baum-Welch's steps: all of them, or (terminated jobs only) those before the first bin that
                                                            // holds a job still in the system.
        let mut exact = steps;
        for job in lo..hi {
            let step = (known.submit[job].div_euclid(bin) - first) as usize;
            if let Some(b) = self.done_bin[job] {
                counts[step * k + b as usize] += 1.0;
            } else {
                exact = exact.min(step);
                if known.start[job] >= 0 {
                    let elapsed = (now - known.start[job]) as f64;
                    censored.push((step, runtime_bin(elapsed, self.p.ratio).min(k - 1)));
                }
            }
        }
        let trained = if self.p.running { steps } else { exact };
        if trained == 0 {
            return; // nothing exact to learn from yet: keep the previous model
        }
        let in_training: Vec<(usize, usize)> = if self.p.running {
            censored.clone()
        } else {
            Vec::new()
        };
        let observations: f64 = counts[..trained * k].iter().sum();
        let (mut start, mut trans, mut emis) = match (&self.model, restart) {
            (Some(m), false) => (m.start.clone(), m.trans.clone(), m.emis.clone()),
            _ => (
                vec![1.0 / n as f64; n],
                sticky(n, self.p.stay),
                self.static_emissions(),
            ),
        };
        // The thesis' rule: no rounds while sqrt(terminated jobs) x the last change stays below ε.
        let due = !self.p.rule
            || restart
            || (self.completed as f64).sqrt() * self.last_change >= self.p.converge;
        let rounds = match (self.p.converge > 0.0, restart) {
            _ if !due => 0,
            (true, _) => self.p.maxrounds,
            (false, true) => 4 * self.p.rounds,
            (false, false) => self.p.rounds,
        };
        let mut gamma = Vec::new();
        for _ in 0..rounds {
            let survival = survival_of(&emis, n, k);
            let log_b = log_observations(&counts, &in_training, trained, n, k, &emis, &survival);
            let Ok(pass) = forward_backward(&log_b, trained, n, &start, &trans) else {
                return; // keep the previous model (cannot happen with floored emissions)
            };
            // M step: expected counts, with each censored job spread over the bins it may end in.
            let mut expected = vec![0.0; n * k];
            for t in 0..trained {
                for s in 0..n {
                    let g = pass.gamma[t * n + s];
                    if g == 0.0 {
                        continue;
                    }
                    for c in 0..k {
                        expected[s * k + c] += g * counts[t * k + c];
                    }
                }
            }
            for &(t, b) in &in_training {
                for s in 0..n {
                    let g = pass.gamma[t * n + s] / survival[s * (k + 1) + b];
                    for c in b..k {
                        expected[s * k + c] += g * emis[s * k + c];
                    }
                }
            }
            let mut change = 0.0;
            for s in 0..n {
                let row = &mut expected[s * k..(s + 1) * k];
                let total: f64 = row.iter().sum();
                // A floor keeps every bin possible in every state: a job in a bin never seen yet must
                // not make the observations impossible.
                for (c, e) in row.iter().enumerate() {
                    let theta = if total > 0.0 {
                        e / total
                    } else {
                        emis[s * k + c]
                    };
                    let new = 0.999 * theta + 0.001 / k as f64;
                    change += (new - emis[s * k + c]).abs();
                    emis[s * k + c] = new;
                }
                let out: f64 = pass.xi[s * n..(s + 1) * n].iter().sum();
                if out > 0.0 {
                    for j in 0..n {
                        let new = pass.xi[s * n + j] / out;
                        change += (new - trans[s * n + j]).abs();
                        trans[s * n + j] = new;
                    }
                }
            }
            change += start
                .iter()
                .zip(&pass.gamma[..n])
                .map(|(a, b)| (a - b).abs())
                .sum::<f64>();
            start.copy_from_slice(&pass.gamma[..n]);
            gamma = pass.gamma;
            self.last_change = change;
            if self.p.converge > 0.0 && observations.sqrt() * change < self.p.converge {
                break;
            }
        }
        if trained < steps || !self.p.running || rounds == 0 {
            // The laws see every bin up to now, the running jobs included, through the trained model.
            let survival = survival_of(&emis, n, k);
            let log_b = log_observations(&counts, &censored, steps, n, k, &emis, &survival);
            let Ok(pass) = forward_backward(&log_b, steps, n, &start, &trans) else {
                return;
            };
            gamma = pass.gamma;
        }
        self.model = Some(Model {
            start,
            trans,
            emis,
            first,
            last,
            gamma,
        });
    }

    /// The run-time law of a job submitted at `submit` that may run `requested` seconds.
    pub fn law(&self, submit: i64, requested: i64) -> Law {
        let Some(m) = &self.model else {
            return Law::Point(requested);
        };
        let (n, k) = (self.p.states, self.columns);
        let s = submit.div_euclid(self.p.bin);
        let mut state: Vec<f64> = if s >= m.first && s <= m.last {
            m.gamma[((s - m.first) as usize) * n..((s - m.first) as usize + 1) * n].to_vec()
        } else {
            m.gamma[((m.last - m.first) as usize) * n..].to_vec()
        };
        // Past the last trained bin: carried forward by the transitions (a few steps suffice to
        // reach the stationary mix; more would only cost time).
        let ahead = (s - m.last).clamp(0, 96);
        for _ in 0..ahead {
            let mut next = vec![0.0; n];
            for (&w, row) in state.iter().zip(m.trans.chunks_exact(n)) {
                for (to, &a) in next.iter_mut().zip(row) {
                    *to += w * a;
                }
            }
            state = next;
        }
        let mut probs = vec![0.0; k];
        for (&w, row) in state.iter().zip(m.emis.chunks_exact(k)) {
            for (p, &e) in probs.iter_mut().zip(row) {
                *p += w * e;
            }
        }
        let total: f64 = probs.iter().sum();
        probs.iter_mut().for_each(|p| *p /= total);
        Law::binned(probs, self.p.ratio, requested)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_parse_and_print_canonically() {
        let p: HmmParams = "states=4, ratio=2".parse().unwrap();
        assert_eq!(p.states, 4);
        assert_eq!(
            p.to_string(),
            "states=4,bin=900,ratio=2,rounds=5,update=86400,window=2592000"
        );
        assert!("states=0".parse::<HmmParams>().is_err());
        assert!("ratio=1".parse::<HmmParams>().is_err());
        assert!("color=red".parse::<HmmParams>().is_err());
        assert!("states=2,states=3".parse::<HmmParams>().is_err());
        // The thesis' settings: spelled after the others, and only where they differ from ours.
        let thesis: HmmParams = "states=16,band=2,running=0,warmup=604800,converge=200"
            .parse()
            .unwrap();
        assert_eq!(
            (thesis.band, thesis.running, thesis.warmup, thesis.converge),
            (2.0, false, 604_800, 200.0)
        );
        assert_eq!(
            thesis.to_string(),
            "states=16,bin=900,ratio=1.8,rounds=5,update=86400,window=2592000,band=2,running=0,\
             warmup=604800,converge=200"
        );
        assert_eq!(thesis.to_string().parse::<HmmParams>().unwrap(), thesis);
        assert!("running=2".parse::<HmmParams>().is_err());
        assert!("every=1".parse::<HmmParams>().unwrap().every);
        assert!("every=yes".parse::<HmmParams>().is_err());
        assert!("band=0.5".parse::<HmmParams>().is_err());
        assert!("warmup=-1".parse::<HmmParams>().is_err());
    }

    /// Days alternating between 60-second and 5-hour jobs, 40 a day for two weeks, every job done.
    fn alternating_days() -> (Vec<i64>, Vec<i64>) {
        let (day, per_day, days) = (86_400i64, 40i64, 14i64);
        let mut submit = Vec::new();
        let mut run = Vec::new();
        for d in 0..days {
            for i in 0..per_day {
                submit.push(d * day + i * (day / per_day));
                run.push(if d % 2 == 0 { 60 } else { 18_000 });
            }
        }
        (submit, run)
    }

    #[test]
    fn the_theses_three_initial_and_update_settings_parse_print_and_are_checked() {
        let p: HmmParams = "states=4,stay=uniform,maxrounds=10000,rule=1,converge=200"
            .parse()
            .unwrap();
        assert_eq!((p.stay, p.maxrounds, p.rule), (0.0, 10_000, true));
        assert!(p
            .to_string()
            .ends_with(",converge=200,stay=uniform,maxrounds=10000,rule=1"));
        assert_eq!(
            "stay=0.5"
                .parse::<HmmParams>()
                .unwrap()
                .to_string()
                .matches("stay=0.5")
                .count(),
            1
        );
        // The defaults keep the spelling of earlier runs.
        assert!(!HmmParams::default().to_string().contains("stay"));
        for bad in [
            "stay=1",
            "stay=0",
            "stay=x",
            "maxrounds=0",
            "rule=2",
            "rule=1",
        ] {
            assert!(bad.parse::<HmmParams>().is_err(), "{bad}");
        }
        // Uniform: every row the same; the default stays put with probability 0.9.
        assert_eq!(sticky(4, 0.0), vec![0.25; 16]);
        let t = sticky(3, 0.9);
        assert!(
            (t[0] - 0.9).abs() < 1e-12 && (t[1] - 0.05).abs() < 1e-12 && (t[4] - 0.9).abs() < 1e-12
        );
    }

    #[test]
    fn under_the_theses_rule_an_update_re_estimates_only_when_the_last_change_is_not_small_enough()
    {
        let (submit, run) = alternating_days();
        let n = submit.len();
        let p: HmmParams = "states=2,band=2,running=0,converge=200,rule=1"
            .parse()
            .unwrap();
        let mut hmm = OnlineHmm::new(p, n, 86_400, 0);
        let known = Known {
            submit: &submit,
            start: &submit,
        };
        for j in 0..n / 2 {
            hmm.completed(j, run[j]);
        }
        let now = submit[n / 2];
        hmm.next_update = now;
        hmm.maybe_update(now, &known);
        let first = hmm.model.as_ref().unwrap().trans.clone();
        // Converged: sqrt(jobs) x the last change is below ε.  One more job keeps it below: the next
        // update refreshes the posteriors but leaves the parameters.
        assert!((hmm.completed as f64).sqrt() * hmm.last_change < 200.0);
        hmm.completed(n / 2, run[n / 2]);
        hmm.next_update = now + 3_600;
        hmm.maybe_update(now + 3_600, &known);
        assert_eq!(hmm.model.as_ref().unwrap().trans, first);
        assert_eq!(
            hmm.model.as_ref().unwrap().last,
            (now + 3_600).div_euclid(900)
        );
        // A last change large enough for the jobs now known: the update re-estimates.
        hmm.last_change = 1e9;
        hmm.next_update = now + 7_200;
        hmm.maybe_update(now + 7_200, &known);
        assert_ne!(hmm.model.as_ref().unwrap().trans, first);
    }

    #[test]
    fn the_theses_settings_learn_the_regime_too_and_wait_for_the_warm_up() {
        let (submit, run) = alternating_days();
        let n = submit.len();
        let p: HmmParams = "states=2,band=2,running=0,warmup=604800,converge=200"
            .parse()
            .unwrap();
        let mut hmm = OnlineHmm::new(p, n, 86_400, 0);
        let start = submit.clone();
        let known = Known {
            submit: &submit,
            start: &start,
        };
        // Within the warm-up week: no model, each law one event at the request.
        for j in 0..n / 4 {
            hmm.completed(j, run[j]);
        }
        hmm.maybe_update(5 * 86_400, &known);
        assert!(hmm.model.is_none());
        assert_eq!(hmm.law(86_400, 3_600), Law::Point(3_600));
        for j in n / 4..n {
            hmm.completed(j, run[j]);
        }
        let now = 14 * 86_400 - 1;
        hmm.next_update = now;
        hmm.maybe_update(now, &known);
        let Law::Binned { probs: short, .. } = hmm.law(12 * 86_400 + 100, 86_400) else {
            panic!("no model after the warm-up")
        };
        let Law::Binned { probs: long, .. } = hmm.law(13 * 86_400 + 100, 86_400) else {
            panic!()
        };
        // (Above 0.75, not 0.9: ε = 200 over sqrt(560 jobs) stops the rounds after an L1 change of 8.)
        assert!(short[runtime_bin(60.0, 1.8)] > 0.75, "{short:?}");
        assert!(long[runtime_bin(18_000.0, 1.8)] > 0.75, "{long:?}");
    }

    #[test]
    fn learns_the_regime_of_the_current_day() {
        // After two weeks of alternating days the law of a job submitted on a short day puts most mass
        // on short bins.
        let (day, days) = (86_400i64, 14i64);
        let (submit, run) = alternating_days();
        let n = submit.len();
        let p = HmmParams {
            states: 2,
            rounds: 10,
            ..HmmParams::default()
        };
        let mut hmm = OnlineHmm::new(p, n, 86_400, 0);
        let start: Vec<i64> = submit.clone();
        for j in 0..n {
            hmm.completed(j, run[j]);
        }
        let now = days * day - 1;
        hmm.next_update = now;
        hmm.maybe_update(
            now,
            &Known {
                submit: &submit,
                start: &start,
            },
        );
        let short_day = (days - 2) * day + 100;
        let long_day = (days - 1) * day + 100;
        let short_bin = runtime_bin(60.0, 1.8);
        let long_bin = runtime_bin(18_000.0, 1.8);
        let Law::Binned { probs: short, .. } = hmm.law(short_day, 86_400) else {
            panic!()
        };
        let Law::Binned { probs: long, .. } = hmm.law(long_day, 86_400) else {
            panic!()
        };
        let m = hmm.model.as_ref().unwrap();
        assert!(
            short[short_bin] > 0.9,
            "{short:?} trans {:?} emis {:?}",
            m.trans,
            m.emis
        );
        assert!(long[long_bin] > 0.9, "{long:?}");
    }
}
