//! A formula checked whole once parsed: a number (not a condition), within the stack's depth, its
//! constant parts computed once.

use super::syntax::{tokenize, Kind, Parser};
use super::{Formula, FormulaError, Job, Op, Var, MAX_DEPTH};

pub(super) fn compile(
    body: &str,
    largest_first: bool,
    known_columns: Option<&[&str]>,
) -> Result<Formula, FormulaError> {
    let tokens = tokenize(body)?;
    let mut parser = Parser {
        known_columns,
        columns: Vec::new(),
        tokens: &tokens,
        next: 0,
        program: Vec::new(),
        end: body.len(),
        nesting: 0,
    };
    let kind = parser.expression()?;
    if let Some(token) = parser.peek() {
        return Err(FormulaError {
            message: format!(
                "unexpected {} after a complete formula",
                token.kind.describe()
            ),
            at: token.at,
        });
    }
    if kind != Kind::Number {
        return Err(FormulaError {
            message: "a queue order needs a number, this formula is a condition (true or false): \
                      wrap it in if(condition, a, b)"
                .into(),
            at: 0,
        });
    }
    let mut program = parser.program;
    fold_constants(&mut program);
    if depth(&program) > MAX_DEPTH {
        return Err(FormulaError {
            message: format!(
                "the formula is nested too deeply (more than {MAX_DEPTH} values at once)"
            ),
            at: 0,
        });
    }
    let reads = |vars: &[Var]| {
        program
            .iter()
            .any(|op| matches!(op, Op::Load(v) if vars.contains(v)))
    };
    Ok(Formula {
        text: body.trim().to_string(),
        largest_first,
        moves: reads(&[
            Var::Wait,
            Var::Now,
            Var::UserRunning,
            Var::UserWaiting,
            Var::UserUsage,
            Var::UsageShare,
        ]),
        reads_users: reads(&[
            Var::UserRunning,
            Var::UserWaiting,
            Var::UserUsage,
            Var::UsageShare,
        ]),
        reads_usage: reads(&[Var::UserUsage, Var::UsageShare]),
        program,
        columns: parser.columns,
    })
}

/// The most values on the stack at once.
fn depth(program: &[Op]) -> usize {
    let (mut now, mut most) = (0usize, 0usize);
    for op in program {
        match op {
            Op::Const(_) | Op::Load(_) => now += 1,
            Op::Neg | Op::Not | Op::Ln | Op::Log2 | Op::Log10 | Op::Exp | Op::Sqrt | Op::Abs => {}
            Op::If => now -= 2,
            _ => now -= 1,
        }
        most = most.max(now);
    }
    most
}

/// Replace every operation whose inputs are all constants by its value (`2^10`, `-1`, `log(2)`):
/// written for readability, computed once.
fn fold_constants(program: &mut Vec<Op>) {
    let mut out: Vec<Op> = Vec::with_capacity(program.len());
    let dummy = Job {
        wait: 0.0,
        requested: 0.0,
        predicted: 0.0,
        procs: 0.0,
        submit: 0.0,
        now: 0.0,
        arrival: 0.0,
        id: 0.0,
        user_running: 0.0,
        user_waiting: 0.0,
        user_usage: 0.0,
        usage_share: 0.0,
        columns: Vec::new(),
    };
    for &op in program.iter() {
        let inputs = match op {
            Op::Const(_) | Op::Load(_) => 0,
            Op::Neg | Op::Not | Op::Ln | Op::Log2 | Op::Log10 | Op::Exp | Op::Sqrt | Op::Abs => 1,
            Op::If => 3,
            _ => 2,
        };
        let constant_inputs = inputs > 0
            && out.len() >= inputs
            && out[out.len() - inputs..]
                .iter()
                .all(|o| matches!(o, Op::Const(_)));
        if constant_inputs {
            let mut piece: Vec<Op> = out.split_off(out.len() - inputs);
            piece.push(op);
            let value = Formula {
                text: String::new(),
                largest_first: false,
                program: piece,
                moves: false,
                reads_users: false,
                reads_usage: false,
                columns: Vec::new(),
            }
            .value(&dummy);
            out.push(Op::Const(value));
        } else {
            out.push(op);
        }
    }
    *program = out;
}
