//! Hidden Markov model passes over a long sequence: the scaled forward-backward of Baum-Welch and the
//! Viterbi path.  Compiled because both walk the sequence step by step (a year of 15-minute bins is
//! 35,000 steps, each a small matrix-vector product) and a step in numpy costs more in call overhead
//! than in arithmetic.  The emissions come in as log-probabilities (the model's own business, in
//! Python); each step's are shifted by their maximum before exponentiation and the forward variables
//! renormalized, so no product of many small probabilities ever underflows.

/// The result of one forward-backward pass.
pub struct Pass {
    /// ln P(observations).
    pub log_likelihood: f64,
    /// P(state j at step t | observations), row-major steps x states.
    pub gamma: Vec<f64>,
    /// Σ_t P(state i at t, state j at t+1 | observations), row-major states x states.
    pub xi: Vec<f64>,
}

/// Why a pass cannot be computed.
#[derive(Debug, PartialEq)]
pub enum HmmError {
    /// The arrays' lengths disagree with steps and states.
    Shape(&'static str),
    /// At this step the observation has probability zero under every reachable state.
    Impossible(usize),
}

fn check(
    log_b: &[f64],
    steps: usize,
    states: usize,
    start: &[f64],
    trans: &[f64],
) -> Result<(), HmmError> {
    if states == 0 || steps == 0 {
        return Err(HmmError::Shape("at least one step and one state"));
    }
    if log_b.len() != steps * states {
        return Err(HmmError::Shape("log emissions must be steps x states"));
    }
    if start.len() != states || trans.len() != states * states {
        return Err(HmmError::Shape(
            "start must have one entry per state, transitions states x states",
        ));
    }
    Ok(())
}

/// Scaled emissions of one step: exp(log_b - max) and the max.
fn scaled_row(row: &[f64], out: &mut [f64]) -> f64 {
    let shift = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for (o, &l) in out.iter_mut().zip(row) {
        *o = if shift.is_finite() {
            (l - shift).exp()
        } else {
            0.0
        };
    }
    shift
}

/// The forward pass with its working arrays.
struct Forward {
    /// Normalized forward variables, steps x states.
    alpha: Vec<f64>,
    /// c_t: the sum that normalized step t (with the shifted emissions).
    scale: Vec<f64>,
    /// Emissions shifted by their step's maximum and exponentiated, steps x states.
    b: Vec<f64>,
    /// ln P(observations) = Σ_t ln c_t + shift_t.
    log_likelihood: f64,
}

fn forward(
    log_b: &[f64],
    steps: usize,
    states: usize,
    start: &[f64],
    trans: &[f64],
) -> Result<Forward, HmmError> {
    let n = states;
    let mut alpha = vec![0.0; steps * n];
    let mut b = vec![0.0; steps * n];
    let mut scale = vec![0.0; steps];
    let mut log_likelihood = 0.0;
    for t in 0..steps {
        let shift = scaled_row(&log_b[t * n..(t + 1) * n], &mut b[t * n..(t + 1) * n]);
        let (done, rest) = alpha.split_at_mut(t * n);
        let current = &mut rest[..n];
        if t == 0 {
            current.copy_from_slice(start);
        } else {
            let previous = &done[(t - 1) * n..];
            current.fill(0.0);
            for (i, &p) in previous.iter().enumerate() {
                if p == 0.0 {
                    continue;
                }
                for (c, &a) in current.iter_mut().zip(&trans[i * n..(i + 1) * n]) {
                    *c += p * a;
                }
            }
        }
        let mut total = 0.0;
        for (c, &e) in current.iter_mut().zip(&b[t * n..(t + 1) * n]) {
            *c *= e;
            total += *c;
        }
        // `total` is NaN-free here (finite inputs); a zero total means no state can emit the step.
        if total <= 0.0 || total.is_nan() || !shift.is_finite() {
            return Err(HmmError::Impossible(t));
        }
        current.iter_mut().for_each(|c| *c /= total);
        scale[t] = total;
        log_likelihood += total.ln() + shift;
    }
    Ok(Forward {
        alpha,
        scale,
        b,
        log_likelihood,
    })
}

/// ln P(observations) and the filtered state distribution after the last step.
pub fn score(
    log_b: &[f64],
    steps: usize,
    states: usize,
    start: &[f64],
    trans: &[f64],
) -> Result<(f64, Vec<f64>), HmmError> {
    check(log_b, steps, states, start, trans)?;
    let pass = forward(log_b, steps, states, start, trans)?;
    Ok((
        pass.log_likelihood,
        pass.alpha[(steps - 1) * states..].to_vec(),
    ))
}

/// One forward-backward pass (the E step of Baum-Welch).
pub fn forward_backward(
    log_b: &[f64],
    steps: usize,
    states: usize,
    start: &[f64],
    trans: &[f64],
) -> Result<Pass, HmmError> {
    check(log_b, steps, states, start, trans)?;
    let n = states;
    let Forward {
        alpha: mut gamma,
        scale,
        b,
        log_likelihood,
    } = forward(log_b, steps, states, start, trans)?;
    let mut xi = vec![0.0; n * n];
    let mut beta = vec![1.0; n];
    let mut next = vec![0.0; n];
    // gamma holds alpha; walking backwards, step t's alpha is turned into gamma once beta_t is known.
    for t in (0..steps).rev() {
        if t + 1 < steps {
            // next_j = b_{t+1}(j) beta_{t+1}(j) / c_{t+1}
            for j in 0..n {
                next[j] = b[(t + 1) * n + j] * beta[j] / scale[t + 1];
            }
            let alpha_t = &gamma[t * n..(t + 1) * n];
            for i in 0..n {
                let row = &trans[i * n..(i + 1) * n];
                let mut sum = 0.0;
                for j in 0..n {
                    let term = row[j] * next[j];
                    xi[i * n + j] += alpha_t[i] * term;
                    sum += term;
                }
                beta[i] = sum;
            }
        }
        let row = &mut gamma[t * n..(t + 1) * n];
        let mut total = 0.0;
        for (g, &be) in row.iter_mut().zip(&beta) {
            *g *= be;
            total += *g;
        }
        if total > 0.0 {
            row.iter_mut().for_each(|g| *g /= total);
        }
    }
    Ok(Pass {
        log_likelihood,
        gamma,
        xi,
    })
}

/// The most likely state path (Viterbi, in log space) and its log-probability.
pub fn viterbi(
    log_b: &[f64],
    steps: usize,
    states: usize,
    start: &[f64],
    trans: &[f64],
) -> Result<(Vec<usize>, f64), HmmError> {
    check(log_b, steps, states, start, trans)?;
    let n = states;
    let log_trans: Vec<f64> = trans.iter().map(|a| a.ln()).collect();
    let mut delta: Vec<f64> = start
        .iter()
        .zip(&log_b[..n])
        .map(|(p, l)| p.ln() + l)
        .collect();
    let mut back = vec![0usize; steps * n];
    let mut next = vec![0.0; n];
    for t in 1..steps {
        for j in 0..n {
            let (mut best, mut from) = (f64::NEG_INFINITY, 0);
            for i in 0..n {
                let v = delta[i] + log_trans[i * n + j];
                if v > best {
                    best = v;
                    from = i;
                }
            }
            next[j] = best + log_b[t * n + j];
            back[t * n + j] = from;
        }
        std::mem::swap(&mut delta, &mut next);
    }
    let (mut state, mut best) = (0, f64::NEG_INFINITY);
    for (j, &d) in delta.iter().enumerate() {
        if d > best {
            best = d;
            state = j;
        }
    }
    if !best.is_finite() {
        return Err(HmmError::Impossible(steps - 1));
    }
    let mut path = vec![0; steps];
    for t in (0..steps).rev() {
        path[t] = state;
        state = back[t * n + state];
    }
    Ok((path, best))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(observations) by summing over every state path: the definition, for tiny cases.
    fn brute_force(b: &[f64], steps: usize, n: usize, start: &[f64], trans: &[f64]) -> f64 {
        let mut total = 0.0;
        for code in 0..n.pow(steps as u32) {
            let path: Vec<usize> = (0..steps).map(|t| (code / n.pow(t as u32)) % n).collect();
            let mut p = start[path[0]] * b[path[0]];
            for t in 1..steps {
                p *= trans[path[t - 1] * n + path[t]] * b[t * n + path[t]];
            }
            total += p;
        }
        total
    }

    #[test]
    fn likelihood_and_posteriors_equal_the_sum_over_paths() {
        let (steps, n) = (5, 2);
        let b = [0.5, 0.1, 0.2, 0.7, 0.9, 0.3, 0.4, 0.4, 0.05, 0.6];
        let log_b: Vec<f64> = b.iter().map(|x: &f64| x.ln()).collect();
        let start = [0.6, 0.4];
        let trans = [0.7, 0.3, 0.2, 0.8];
        let pass = forward_backward(&log_b, steps, n, &start, &trans).unwrap();
        let exact = brute_force(&b, steps, n, &start, &trans);
        assert!((pass.log_likelihood - exact.ln()).abs() < 1e-12);
        // gamma of state 0 at step 2: paths through it over all paths.
        let mut through = b.to_vec();
        through[2 * n + 1] = 0.0;
        let g = brute_force(&through, steps, n, &start, &trans) / exact;
        assert!((pass.gamma[2 * n] - g).abs() < 1e-12);
        let xi_total: f64 = pass.xi.iter().sum();
        assert!((xi_total - (steps - 1) as f64).abs() < 1e-12);
    }

    #[test]
    fn ten_thousand_steps_of_tiny_probabilities_do_not_underflow() {
        let (steps, n) = (10_000, 3);
        let log_b: Vec<f64> = (0..steps * n).map(|k| -700.0 - (k % 5) as f64).collect();
        let start = [1.0 / 3.0; 3];
        let trans = [0.8, 0.1, 0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.8];
        let pass = forward_backward(&log_b, steps, n, &start, &trans).unwrap();
        assert!(pass.log_likelihood.is_finite() && pass.log_likelihood < -7.0e6);
        assert!(pass.gamma.iter().all(|g| g.is_finite()));
    }

    #[test]
    fn an_observation_no_state_can_emit_is_reported_with_its_step() {
        let log_b = [0.0, 0.0, f64::NEG_INFINITY, f64::NEG_INFINITY];
        let err = forward_backward(&log_b, 2, 2, &[0.5, 0.5], &[0.5, 0.5, 0.5, 0.5]).err();
        assert_eq!(err, Some(HmmError::Impossible(1)));
    }

    #[test]
    fn viterbi_finds_the_best_path_of_a_tiny_case() {
        let (steps, n) = (4, 2);
        let b = [0.9, 0.1, 0.8, 0.3, 0.1, 0.9, 0.2, 0.7];
        let log_b: Vec<f64> = b.iter().map(|x: &f64| x.ln()).collect();
        let start = [0.5, 0.5];
        let trans = [0.9, 0.1, 0.1, 0.9];
        let (path, best) = viterbi(&log_b, steps, n, &start, &trans).unwrap();
        let mut top = (f64::NEG_INFINITY, vec![]);
        for code in 0..16usize {
            let p: Vec<usize> = (0..steps).map(|t| (code >> t) & 1).collect();
            let mut v = start[p[0]].ln() + log_b[p[0]];
            for t in 1..steps {
                v += trans[p[t - 1] * n + p[t]].ln() + log_b[t * n + p[t]];
            }
            if v > top.0 {
                top = (v, p);
            }
        }
        assert_eq!(path, top.1);
        assert!((best - top.0).abs() < 1e-12);
    }
}
