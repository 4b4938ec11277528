//! The E-Loss family of learned runtime predictors (Gaussier, Glesser, Reis and Trystram, SC'15): a
//! linear model over the features of `features.rs`, learned online by Normalized Adaptive Gradient
//! (NAG; Ross, Mineiro and Langford, "Normalized Online Learning", UAI 2013) with an asymmetric,
//! job-weighted loss and an l2 penalty.  docs/predictions.md gives the formulas and the syntax.
//!
//! Every floating-point operation is written in the order the published simulator evaluates it, so
//! that `pyss` replays reproduce its predictions to the second (a truncation to whole seconds would
//! turn the last bit of a different sum into a different schedule).

use std::fmt;
use std::str::FromStr;

/// How the loss grows with the error on one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    Linear,
    Squared,
}

/// Weight of a job in the loss, from its processors q and its runtime p (seconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    /// 1
    One,
    /// 5 + ln(q / p): short wide jobs count more.
    LogProcsRun,
    /// 5 + ln(p / q): long narrow jobs count more.
    LogRunProcs,
    /// 11 + ln(1 / (q p)): small jobs count more.
    LogInverseArea,
    /// 1 + ln(q p): large jobs count more.
    LogArea,
}

/// One member of the family: the loss of predicting f for a job that ran p seconds is
/// weight x over_factor x curve(f - p - threshold) when f - p > threshold (over-prediction), else
/// weight x under_factor x curve(threshold - f + p); plus lambda / 2 x |w|^2.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loss {
    pub over: Curve,
    pub over_factor: f64,
    pub under: Curve,
    pub under_factor: f64,
    pub threshold: f64,
    pub weight: Weight,
    /// NAG's learning rate.
    pub eta: f64,
    /// l2 regularization.
    pub lambda: f64,
}

impl Default for Loss {
    /// The published E-Loss run (the SC'15 simulator's KTH-SP2 configuration): over-predictions
    /// squared x 100, under-predictions squared x 1, weight 5 + ln(q/p), eta 5000, lambda 4e9.
    fn default() -> Self {
        Loss {
            over: Curve::Squared,
            over_factor: 100.0,
            under: Curve::Squared,
            under_factor: 1.0,
            threshold: 0.0,
            weight: Weight::LogProcsRun,
            eta: 5000.0,
            lambda: 4e9,
        }
    }
}

const CURVES: [(&str, Curve); 2] = [("linear", Curve::Linear), ("squared", Curve::Squared)];
const WEIGHTS: [(&str, Weight); 5] = [
    ("one", Weight::One),
    ("log-procs-run", Weight::LogProcsRun),
    ("log-run-procs", Weight::LogRunProcs),
    ("log-inverse-area", Weight::LogInverseArea),
    ("log-area", Weight::LogArea),
];
const KEYS: [&str; 8] = [
    "over",
    "under",
    "over-factor",
    "under-factor",
    "threshold",
    "weight",
    "eta",
    "lambda",
];

fn named<T: Copy>(table: &[(&str, T)], key: &str, value: &str) -> Result<T, String> {
    table
        .iter()
        .find(|(name, _)| *name == value)
        .map(|&(_, item)| item)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(name, _)| *name).collect();
            format!(
                "unknown eloss {key} {value:?}; expected one of: {}",
                names.join(", ")
            )
        })
}

fn name_of<T: Copy + PartialEq>(table: &[(&'static str, T)], item: T) -> &'static str {
    table.iter().find(|(_, t)| *t == item).expect("listed").0
}

fn number(key: &str, value: &str, positive: bool) -> Result<f64, String> {
    let x: f64 = value
        .parse()
        .map_err(|_| format!("eloss {key} must be a number, got {value:?}"))?;
    let ok = x.is_finite() && if positive { x > 0.0 } else { x >= 0.0 };
    if !ok {
        let bound = if positive { "positive" } else { "at least 0" };
        return Err(format!(
            "eloss {key} must be a finite number {bound}, got {value}"
        ));
    }
    Ok(x)
}

impl FromStr for Loss {
    type Err = String;

    /// `key=value` pairs separated by commas, each key at most once; missing keys keep the default.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut loss = Loss::default();
        for (key, value) in super::parameters::pairs(text, "eloss parameter", &KEYS)? {
            match key {
                "over" => loss.over = named(&CURVES, key, value)?,
                "under" => loss.under = named(&CURVES, key, value)?,
                "over-factor" => loss.over_factor = number(key, value, true)?,
                "under-factor" => loss.under_factor = number(key, value, true)?,
                "threshold" => loss.threshold = number(key, value, false)?,
                "weight" => loss.weight = named(&WEIGHTS, key, value)?,
                "eta" => loss.eta = number(key, value, true)?,
                _ => loss.lambda = number(key, value, false)?,
            }
        }
        Ok(loss)
    }
}

impl fmt::Display for Loss {
    /// The parameters that differ from the default, in a fixed order: the canonical spelling (a
    /// campaign's run key and its tables use it; the default E-Loss is the empty string).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = Loss::default();
        let mut parts: Vec<String> = Vec::new();
        let mut put = |key: &str, value: String, default: String| {
            if value != default {
                parts.push(format!("{key}={value}"));
            }
        };
        put(
            "over",
            name_of(&CURVES, self.over).into(),
            name_of(&CURVES, d.over).into(),
        );
        put(
            "under",
            name_of(&CURVES, self.under).into(),
            name_of(&CURVES, d.under).into(),
        );
        put(
            "over-factor",
            self.over_factor.to_string(),
            d.over_factor.to_string(),
        );
        put(
            "under-factor",
            self.under_factor.to_string(),
            d.under_factor.to_string(),
        );
        put(
            "threshold",
            self.threshold.to_string(),
            d.threshold.to_string(),
        );
        let weight = |w| name_of(&WEIGHTS, w).to_string();
        put("weight", weight(self.weight), weight(d.weight));
        put("eta", self.eta.to_string(), d.eta.to_string());
        put("lambda", self.lambda.to_string(), d.lambda.to_string());
        write!(f, "{}", parts.join(","))
    }
}

/// d loss / d w_i without the penalty, for one example: `at(x_i)` (the published expressions, in
/// their order of operations).
#[derive(Clone, Copy, Debug)]
pub enum Slope {
    /// signed weight x (x_i x factor)
    Linear {
        weight: f64,
        factor: f64,
    },
    /// signed weight x (factor x 2 x x_i x excess)
    Squared {
        weight: f64,
        factor: f64,
        excess: f64,
    },
    Zero,
}

impl Slope {
    #[inline(always)]
    pub fn at(self, x: f64) -> f64 {
        match self {
            Slope::Linear { weight, factor } => weight * (x * factor),
            Slope::Squared {
                weight,
                factor,
                excess,
            } => weight * (factor * 2.0 * x * excess),
            Slope::Zero => 0.0,
        }
    }
}

impl Loss {
    /// The slope for prediction `px` of runtime `y`, for a job of weight `weight`: over-predictions
    /// (px - y past the threshold) count positively, under-predictions negatively.
    pub fn slope(&self, y: f64, weight: f64, px: f64) -> Slope {
        let side = |curve: Curve, weight: f64, factor: f64, excess: f64| match curve {
            Curve::Linear => Slope::Linear { weight, factor },
            Curve::Squared => Slope::Squared {
                weight,
                factor,
                excess,
            },
        };
        if px - y > self.threshold {
            side(self.over, weight, self.over_factor, px - y - self.threshold)
        } else if px - y == self.threshold {
            Slope::Zero
        } else {
            side(
                self.under,
                -weight,
                self.under_factor,
                self.threshold - px + y,
            )
        }
    }

    /// A job's weight (q processors, p seconds of runtime).  It may be negative, as the published
    /// expressions allow (5 + ln(q/p) for a 1-processor job of more than 148 s), but never infinite:
    /// a runtime under 1 s counts as 1 s (a 0-second job would make ln infinite and the model NaN).
    pub fn weight_of(&self, procs: i64, run: i64) -> f64 {
        let (m, r) = (procs.max(1) as f64, run.max(1) as f64);
        match self.weight {
            Weight::One => 1.0,
            Weight::LogProcsRun => 5.0 + (m / r).ln(),
            Weight::LogRunProcs => 5.0 + (r / m).ln(),
            Weight::LogInverseArea => 11.0 + (1.0 / (r * m)).ln(),
            Weight::LogArea => 1.0 + (m * r).ln(),
        }
    }

    /// The loss of predicting `predicted` seconds for a job that ran `run` seconds on `procs`
    /// processors, without the penalty (the definition above, used to score predictions).
    pub fn value(&self, predicted: f64, procs: i64, run: i64) -> f64 {
        let curve = |curve: Curve, e: f64| match curve {
            Curve::Linear => e,
            Curve::Squared => e * e,
        };
        let e = predicted - run as f64;
        let weight = self.weight_of(procs, run);
        if e > self.threshold {
            weight * self.over_factor * curve(self.over, e - self.threshold)
        } else if e < self.threshold {
            weight * self.under_factor * curve(self.under, self.threshold - e)
        } else {
            0.0
        }
    }
}

/// The learner's state: weights, per-feature scales and NAG's accumulators (all start at 1e-9, the
/// published initial values, except the weights at 0).
pub struct Nag {
    w: Vec<f64>,
    scale: Vec<f64>,
    squares: Vec<f64>,
    normalizer: f64,
    updates: f64,
}

const TINY: f64 = 1e-9;

impl Nag {
    pub fn new(dim: usize) -> Self {
        Nag {
            w: vec![0.0; dim],
            scale: vec![TINY; dim],
            squares: vec![TINY; dim],
            normalizer: TINY,
            updates: 1.0,
        }
    }

    pub fn predict(&self, x: &[f64]) -> f64 {
        let mut r = 0.0;
        for (w, x) in self.w.iter().zip(x) {
            r += w * x;
        }
        r
    }

    /// One step on example (x, y) of weight `weight`.
    ///
    /// The hot loop of E-Loss replays.  Each per-feature expression keeps the published operation
    /// order (pyss replays must match to the last bit); what is reorganized is only where no order
    /// is at stake: the loss's branch is taken once per step instead of once per feature, and the
    /// per-feature ratios are computed in a loop of their own, so that both loops vectorize.
    pub fn fit(&mut self, loss: &Loss, x: &[f64], y: f64, weight: f64) {
        // Divisions and square roots dominate a step.  With AVX-512 (AVX) they go eight (four) at a
        // time instead of two; each is still one correctly rounded IEEE operation, and Rust never
        // fuses a multiply and an add on its own, so the results are the same bits.
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has just been seen to support AVX-512F.
                unsafe { self.fit_avx512(loss, x, y, weight) };
                return;
            }
            if std::is_x86_feature_detected!("avx") {
                // SAFETY: the CPU has just been seen to support AVX.
                unsafe { self.fit_avx(loss, x, y, weight) };
                return;
            }
        }
        self.fit_anywhere(loss, x, y, weight);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn fit_avx512(&mut self, loss: &Loss, x: &[f64], y: f64, weight: f64) {
        self.fit_anywhere(loss, x, y, weight);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn fit_avx(&mut self, loss: &Loss, x: &[f64], y: f64, weight: f64) {
        self.fit_anywhere(loss, x, y, weight);
    }

    #[inline(always)]
    fn fit_anywhere(&mut self, loss: &Loss, x: &[f64], y: f64, weight: f64) {
        let dim = self.w.len();
        let x = &x[..dim];
        // A feature larger than any seen rescales its weight, so that w_i x_i keeps its size.
        for ((w, scale), x) in self.w.iter_mut().zip(&mut self.scale).zip(x) {
            let absx = x.abs();
            if absx > *scale {
                *w *= *scale / absx;
                *scale = absx;
            }
        }
        let mut ratios = [0.0; MAX_DIM];
        let ratios = &mut ratios[..dim];
        for ((r, a), b) in ratios.iter_mut().zip(x).zip(&self.scale) {
            *r = a * a / (b * b);
        }
        let mut sum = 0.0;
        for r in ratios.iter() {
            sum += r; // in feature order, as published
        }
        self.normalizer += sum;
        let px = self.predict(x);
        // Each arm hands `descend` a slope whose variant is fixed, so that the match inside
        // `Slope::at` disappears from the loop once inlined.
        match loss.slope(y, weight, px) {
            s @ Slope::Linear { .. } => self.descend(loss, x, |v| s.at(v)),
            s @ Slope::Squared { .. } => self.descend(loss, x, |v| s.at(v)),
            Slope::Zero => self.descend(loss, x, |_| 0.0),
        }
        self.updates += 2.0;
    }
}

impl Nag {
    /// The normalized step of every weight, for the loss's slope in each feature (without the penalty).
    #[inline(always)]
    fn descend(&mut self, loss: &Loss, x: &[f64], slope: impl Fn(f64) -> f64) {
        let (normalizer, updates) = (self.normalizer, self.updates);
        let parts = self.w.iter_mut().zip(&mut self.squares).zip(&self.scale);
        for (((w, squares), scale), x) in parts.zip(x) {
            let g = slope(*x) + loss.lambda * *w;
            *squares += g * g;
            *w += -loss.eta * g / ((normalizer * *squares / updates).sqrt() * scale);
        }
    }
}

/// The largest model (the learner's 157 features); `Nag::fit` keeps per-feature scratch on the stack.
pub const MAX_DIM: usize = 160;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_key_and_prints_the_canonical_spelling() {
        let loss: Loss = "under=linear, weight=log-area,eta=10,lambda=0"
            .parse()
            .unwrap();
        assert_eq!(loss.under, Curve::Linear);
        assert_eq!(loss.over, Curve::Squared);
        assert_eq!(loss.weight, Weight::LogArea);
        assert_eq!((loss.eta, loss.lambda), (10.0, 0.0));
        let again: Loss = loss.to_string().parse().unwrap();
        assert_eq!(again, loss);
        assert_eq!("".parse::<Loss>().unwrap(), Loss::default());
        for bad in [
            "over=cubic",
            "speed=1",
            "eta=0",
            "eta=x",
            "lambda=-1",
            "over",
            "eta=1,eta=2",
        ] {
            assert!(bad.parse::<Loss>().is_err(), "{bad}");
        }
    }

    #[test]
    fn nag_steps_by_hand() {
        // Two features, squared loss both sides (factors 1), weight 1, eta 1, no penalty.
        let loss = Loss {
            over_factor: 1.0,
            under_factor: 1.0,
            eta: 1.0,
            lambda: 0.0,
            weight: Weight::One,
            ..Loss::default()
        };
        let mut nag = Nag::new(2);
        // Example 1: x = (1, 2), y = 10.  Scales become (1, 2); N = 1e-9 + 1 + 1; prediction 0
        // (under-prediction by 10): g = -(2 x_i x 10) = (-20, -40); G = (400 + 1e-9, 1600 + 1e-9);
        // step_i = -g_i / (sqrt(N G_i / 1) s_i).
        nag.fit(&loss, &[1.0, 2.0], 10.0, 1.0);
        let n: f64 = 1e-9 + 2.0;
        let w0 = 20.0 / ((n * (400.0 + 1e-9)).sqrt() * 1.0);
        let w1 = 40.0 / ((n * (1600.0 + 1e-9)).sqrt() * 2.0);
        assert!((nag.w[0] - w0).abs() < 1e-15 && (nag.w[1] - w1).abs() < 1e-15);
        // Example 2: x = (1, 4) grows the second scale to 4: w1 is halved first.  Then
        // N += 1 + 1, and the prediction is w0 + 4 w1 / 2.
        let w1 = w1 * 2.0 / 4.0;
        let px = w0 + 4.0 * w1;
        nag.fit(&loss, &[1.0, 4.0], 1.0, 1.0);
        // px ~ 1.41 > 1: an over-prediction, g_i = 2 x_i (px - 1).
        assert!(px > 1.0);
        let n = n + 2.0;
        let g = [2.0 * (px - 1.0), 2.0 * 4.0 * (px - 1.0)];
        let squares = [400.0 + 1e-9 + g[0] * g[0], 1600.0 + 1e-9 + g[1] * g[1]];
        let e0 = w0 - g[0] / ((n * squares[0] / 3.0).sqrt() * 1.0);
        let e1 = w1 - g[1] / ((n * squares[1] / 3.0).sqrt() * 4.0);
        assert!((nag.w[0] - e0).abs() < 1e-12, "{} vs {e0}", nag.w[0]);
        assert!((nag.w[1] - e1).abs() < 1e-12, "{} vs {e1}", nag.w[1]);
    }

    #[test]
    fn every_curve_and_side_of_the_loss() {
        let x = 3.0;
        let mut loss = Loss {
            over_factor: 100.0,
            under_factor: 2.0,
            threshold: 5.0,
            ..Loss::default()
        };
        // Over by 15 (past the threshold by 10): squared 100 x 2 x 3 x 10, linear 3 x 100.
        assert_eq!(
            loss.slope(100.0, 0.5, 115.0).at(x),
            0.5 * 100.0 * 2.0 * 3.0 * 10.0
        );
        loss.over = Curve::Linear;
        assert_eq!(loss.slope(100.0, 0.5, 115.0).at(x), 0.5 * 3.0 * 100.0);
        // Exactly at the threshold: no slope.
        assert_eq!(loss.slope(100.0, 0.5, 105.0).at(x), 0.0);
        // Under by 20 (threshold - f + p = 25): squared -(2 x 2 x 3 x 25), linear -(3 x 2).
        assert_eq!(
            loss.slope(100.0, 1.0, 80.0).at(x),
            -(2.0 * 2.0 * 3.0 * 25.0)
        );
        loss.under = Curve::Linear;
        assert_eq!(loss.slope(100.0, 1.0, 80.0).at(x), -(3.0 * 2.0));
    }

    #[test]
    fn wide_vector_steps_give_the_same_bits() {
        // `fit` takes the AVX paths where the CPU has them; `fit_anywhere` is the portable code.
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for over in [Curve::Linear, Curve::Squared] {
            let loss = Loss {
                over,
                under: Curve::Linear,
                ..Loss::default()
            };
            let (mut wide, mut plain) = (Nag::new(157), Nag::new(157));
            for _ in 0..300 {
                let x: Vec<f64> = (0..157).map(|_| (next() - 0.3) * 1e4).collect();
                let (y, weight) = (next() * 1e5, 5.0 + next().ln());
                wide.fit(&loss, &x, y, weight);
                plain.fit_anywhere(&loss, &x, y, weight);
            }
            let bits = |n: &Nag| n.w.iter().map(|w| w.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&wide), bits(&plain));
            assert!(wide.w.iter().all(|w| w.is_finite() && *w != 0.0));
        }
    }

    #[test]
    fn weights_by_hand() {
        let mut loss = Loss::default();
        let cases = [
            (Weight::One, 1.0),
            (Weight::LogProcsRun, 5.0 + (8.0f64 / 100.0).ln()),
            (Weight::LogRunProcs, 5.0 + (100.0f64 / 8.0).ln()),
            (Weight::LogInverseArea, 11.0 + (1.0f64 / 800.0).ln()),
            (Weight::LogArea, 1.0 + 800.0f64.ln()),
        ];
        for (weight, expected) in cases {
            loss.weight = weight;
            assert_eq!(loss.weight_of(8, 100), expected);
            assert!(loss.weight_of(1, 0).is_finite(), "{weight:?}");
            assert_eq!(loss.weight_of(1, 0), loss.weight_of(1, 1));
        }
    }

    #[test]
    fn loss_values_by_hand() {
        // Over squared x 100, under linear x 2, threshold 5, weight 1 + ln(q p) with q p = e.
        let loss: Loss = "under=linear,under-factor=2,threshold=5,weight=log-area"
            .parse()
            .unwrap();
        let w = 1.0 + (1.0f64 * 3.0).ln();
        assert!((loss.value(10.0, 1, 3) - w * 100.0 * 4.0).abs() < 1e-9); // e = 7: 2 over the threshold
        assert!((loss.value(4.0, 1, 3) - w * 2.0 * 4.0).abs() < 1e-9); // e = 1: 4 under the threshold
        assert_eq!(loss.value(8.0, 1, 3), 0.0); // exactly the threshold
    }
}
