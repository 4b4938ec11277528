//! The stack machine a checked formula runs on: one job's value, or a batch's.

use super::{Formula, Job, Op, Var, MAX_DEPTH};

/// What each operation of one input computes, written once for both evaluators (one job's stack,
/// a batch's columns): `$apply!(|a| expression)` for the operation `$op`, `$otherwise` for others.
macro_rules! unary_semantics {
    ($apply:ident, $op:expr, $otherwise:expr) => {
        match $op {
            Op::Neg => $apply!(|a| -a),
            Op::Not => $apply!(|a| truth(a == 0.0)),
            Op::Ln => $apply!(|a| a.ln()),
            Op::Log2 => $apply!(|a| a.log2()),
            Op::Log10 => $apply!(|a| a.log10()),
            Op::Exp => $apply!(|a| a.exp()),
            Op::Sqrt => $apply!(|a| a.sqrt()),
            Op::Abs => $apply!(|a| a.abs()),
            _ => $otherwise,
        }
    };
}

/// The same for the operations of two inputs: `$apply!(|a, b| expression)`.
macro_rules! binary_semantics {
    ($apply:ident, $op:expr, $otherwise:expr) => {
        match $op {
            Op::Add => $apply!(|a, b| a + b),
            Op::Sub => $apply!(|a, b| a - b),
            Op::Mul => $apply!(|a, b| a * b),
            Op::Div => $apply!(|a, b| a / b),
            Op::Pow => $apply!(|a, b| power(a, b)),
            Op::Lt => $apply!(|a, b| truth(a < b)),
            Op::Le => $apply!(|a, b| truth(a <= b)),
            Op::Gt => $apply!(|a, b| truth(a > b)),
            Op::Ge => $apply!(|a, b| truth(a >= b)),
            Op::Eq => $apply!(|a, b| truth(a == b)),
            Op::Ne => $apply!(|a, b| truth(a != b)),
            Op::And => $apply!(|a, b| truth(a != 0.0 && b != 0.0)),
            Op::Or => $apply!(|a, b| truth(a != 0.0 || b != 0.0)),
            Op::Min => $apply!(|a, b| smaller(a, b)),
            Op::Max => $apply!(|a, b| larger(a, b)),
            _ => $otherwise,
        }
    };
}

impl Formula {
    /// The formula's value for `job` (NaN and infinities as computed: the caller decides).
    pub fn value(&self, job: &Job) -> f64 {
        self.value_with(|var| Formula::value_of(var, job))
    }

    pub(super) fn value_of(var: Var, job: &Job) -> f64 {
        match var {
            Var::Wait => job.wait,
            Var::Requested => job.requested,
            Var::Predicted => job.predicted,
            Var::Procs => job.procs,
            Var::Submit => job.submit,
            Var::Now => job.now,
            Var::Arrival => job.arrival,
            Var::Id => job.id,
            Var::UserRunning => job.user_running,
            Var::UserWaiting => job.user_waiting,
            Var::UserUsage => job.user_usage,
            Var::UsageShare => job.usage_share,
            Var::Column(k) => job.columns.get(usize::from(k)).copied().unwrap_or(f64::NAN),
        }
    }

    /// The value, each variable read by `load` when the program reads it (the engine's keys read
    /// only what the formula names: building every variable of every job cost as much as the rest).
    #[inline(always)]
    pub fn value_with(&self, load: impl Fn(Var) -> f64) -> f64 {
        let mut stack = [0.0f64; MAX_DEPTH];
        let mut top = 0usize; // number of values on the stack
        for op in &self.program {
            // Binary operators read the two top values and leave one.
            macro_rules! binary {
                (|$a:ident, $b:ident| $e:expr) => {{
                    let ($a, $b) = (stack[top - 2], stack[top - 1]);
                    top -= 1;
                    stack[top - 1] = $e;
                }};
            }
            macro_rules! unary {
                (|$a:ident| $e:expr) => {{
                    let $a = stack[top - 1];
                    stack[top - 1] = $e;
                }};
            }
            match *op {
                Op::Const(c) => {
                    stack[top] = c;
                    top += 1;
                }
                Op::Load(var) => {
                    stack[top] = load(var);
                    top += 1;
                }
                Op::If => {
                    let (condition, then, otherwise) =
                        (stack[top - 3], stack[top - 2], stack[top - 1]);
                    top -= 2;
                    stack[top - 1] = if condition != 0.0 { then } else { otherwise };
                }
                other => unary_semantics!(
                    unary,
                    other,
                    binary_semantics!(binary, other, unreachable!("every operation is listed"))
                ),
            }
        }
        stack[0]
    }

    /// The keys of many jobs at once, column by column: each operation runs over the whole batch,
    /// so that the cost of interpreting it is paid once per pass instead of once per job (a sort of
    /// CEA-Curie's queue by a formula with the clock in it took twice the built-in LEXP's time key by
    /// key; batch by batch the loops are as tight as the built-in's).  `load(var, out)` fills one
    /// variable's column; `scratch` keeps the columns between passes.  `out` gets the keys
    /// (negated for `max:`).
    pub fn keys_batch(
        &self,
        out: &mut Vec<f64>,
        len: usize,
        scratch: &mut Vec<Vec<f64>>,
        mut load: impl FnMut(Var, &mut [f64]),
    ) {
        let mut top = 0usize;
        for op in &self.program {
            let inputs = match op {
                Op::Const(_) | Op::Load(_) => 0,
                Op::Neg
                | Op::Not
                | Op::Ln
                | Op::Log2
                | Op::Log10
                | Op::Exp
                | Op::Sqrt
                | Op::Abs => 1,
                Op::If => 3,
                _ => 2,
            };
            if inputs == 0 {
                if scratch.len() <= top {
                    scratch.push(Vec::new());
                }
                let column = &mut scratch[top];
                column.clear();
                column.resize(len, 0.0);
                match *op {
                    Op::Const(c) => column.fill(c),
                    Op::Load(var) => load(var, column),
                    _ => unreachable!(),
                }
                top += 1;
                continue;
            }
            let (below, rest) = scratch.split_at_mut(top - 1);
            let last = &mut rest[0];
            match inputs {
                1 => {
                    macro_rules! each {
                        (|$a:ident| $e:expr) => {
                            last.iter_mut().for_each(|x| {
                                let $a = *x;
                                *x = $e;
                            })
                        };
                    }
                    unary_semantics!(each, op, unreachable!("an operation of one input"));
                }
                2 => {
                    let left = &mut below[top - 2];
                    macro_rules! each {
                        (|$a:ident, $b:ident| $e:expr) => {
                            left.iter_mut().zip(last.iter()).for_each(|(x, &$b)| {
                                let $a = *x;
                                *x = $e;
                            })
                        };
                    }
                    binary_semantics!(each, op, unreachable!("an operation of two inputs"));
                    top -= 1;
                }
                _ => {
                    let (conditions, then) = below.split_at_mut(top - 2);
                    let (condition, then) = (&mut conditions[top - 3], &then[0]);
                    for ((c, &a), &b) in condition.iter_mut().zip(then.iter()).zip(last.iter()) {
                        *c = if *c != 0.0 { a } else { b };
                    }
                    top -= 2;
                }
            }
        }
        out.clear();
        let sign = if self.largest_first { -1.0 } else { 1.0 };
        out.extend(scratch[0][..len].iter().map(|&v| sign * v));
    }

    /// The key the queue sorts by, smallest first (`max:` negates).
    #[inline(always)]
    pub fn key_with(&self, load: impl Fn(Var) -> f64) -> f64 {
        let value = self.value_with(load);
        if self.largest_first {
            -value
        } else {
            value
        }
    }

    #[cfg(test)]
    pub(super) fn key(&self, job: &Job) -> f64 {
        let value = self.value(job);
        if self.largest_first {
            -value
        } else {
            value
        }
    }

    /// `min:TEXT` or `max:TEXT`.
    pub fn spelled(&self) -> String {
        format!(
            "{}:{}",
            if self.largest_first { "max" } else { "min" },
            self.text
        )
    }
}

fn truth(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// `a^b`: whole exponents by multiplication, as a user computing (w/r)^3 by hand expects to the
/// last bit; others by `powf`.
fn power(a: f64, b: f64) -> f64 {
    if b == 2.0 {
        a * a
    } else if b == 3.0 {
        a * a * a
    } else {
        a.powf(b)
    }
}

/// min and max that carry a NaN through (f64::min would drop it, hiding a division by zero).
fn smaller(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn larger(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}
