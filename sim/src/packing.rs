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
    let mut s: Vec<f64> = vec![0.0; machines.unwrap_or(0)];
    let mut x = s.clone();
    let mut y = s.clone();
    let mut out = Vec::with_capacity(c.len());
    let mut peaks: Vec<f64> = Vec::new();
    for i in 0..c.len() {
        // Peaks after adding the task, for every machine, in a loop the compiler vectorizes (sqrt of
        // the squared modulus rather than hypot, which is several times slower and guards against
        // overflows that normalized demands cannot reach).
        peaks.clear();
        peaks.extend(s.iter().zip(&x).zip(&y).map(|((s, x), y)| {
            let (px, py) = (x + dx[i], y + dy[i]);
            s + c[i] + (px * px + py * py).sqrt()
        }));
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
