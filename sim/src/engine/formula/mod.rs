//! Queue orders a user writes: `min:EXPR` or `max:EXPR` over a waiting job at the moment of the
//! scheduling pass, e.g. `max:(w/r)^3*n` (WFP3).  The text is parsed and type-checked once, into a
//! short program of a stack machine that the engine runs for every waiting job at every pass that
//! sorts the queue (as it computes the built-in LEXP's keys).
//!
//! Why not a general-purpose expression crate: those evaluate over string-keyed contexts and
//! dynamically typed values (a map look-up and an allocation per variable per job), a hundred
//! times the cost of a built-in key, where a campaign evaluates 10^8 keys; and none reports an
//! error as a column of the text.  The language here is small (numbers, eleven functions,
//! comparisons, `if`), so a parser of a hundred lines and a flat program with variables resolved to
//! slots at parse time keep a key within a few nanoseconds of the built-in one.
//!
//! One room per concern: `syntax` (tokens and the parser, which types every value), `check`
//! (the whole formula: its kind, its depth, its constants folded), `eval` (the machine, for one job and
//! for a batch), `presets` (named orders from the literature).

use std::fmt;

/// Longest formula text accepted, in bytes (a documented bound: a formula is a line, not a file).
pub const MAX_FORMULA_BYTES: usize = 1000;
/// Deepest stack a formula may need (nesting): a fixed array on the machine's stack.
const MAX_DEPTH: usize = 64;

/// What a formula reads of a job.  The names, their meaning and the unit are the user's reference
/// (`--help`, docs/your-own-policy.md): one table.
pub const VARIABLES: &[(&str, &str)] = &[
    ("w", "wait so far: now - submit (s)"),
    ("r", "requested time (s)"),
    ("p", "predicted run time at submission (s)"),
    ("n", "processors"),
    ("s", "submit time (s)"),
    ("t", "now: the time of the pass (s)"),
    (
        "a",
        "arrival rank: 0 for the first job submitted, ties by job id",
    ),
    ("id", "job id"),
    ("ur", "running jobs of the job's user"),
    ("uw", "waiting jobs of the job's user (this one included)"),
    (
        "uu",
        "the job's user's decayed past usage: processor-seconds, each weighted 2^(-age / usage half-life)",
    ),
    (
        "un",
        "uu as a share of every user's decayed usage (0 to 1; 0 while nothing has run)",
    ),
];

const FUNCTIONS: &[(&str, usize)] = &[
    ("log", 1),
    ("log2", 1),
    ("log10", 1),
    ("exp", 1),
    ("sqrt", 1),
    ("abs", 1),
    ("min", 0), // two or more
    ("max", 0),
    ("if", 3),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Var {
    Wait,
    Requested,
    Predicted,
    Procs,
    Submit,
    Now,
    Arrival,
    Id,
    UserRunning,
    UserWaiting,
    UserUsage,
    UsageShare,
    /// A numeric column of the jobs' view, by its place in `Formula::columns`.
    Column(u8),
}

/// Most columns of the jobs one formula may read.
const MAX_COLUMNS: usize = 32;

const VAR_OF_NAME: [Var; 12] = [
    Var::Wait,
    Var::Requested,
    Var::Predicted,
    Var::Procs,
    Var::Submit,
    Var::Now,
    Var::Arrival,
    Var::Id,
    Var::UserRunning,
    Var::UserWaiting,
    Var::UserUsage,
    Var::UsageShare,
];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Const(f64),
    Load(Var),
    Neg,
    Not,
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Min,
    Max,
    Ln,
    Log2,
    Log10,
    Exp,
    Sqrt,
    Abs,
    /// Pops else, then, condition.
    If,
}

/// The values of one job at one pass.
pub struct Job {
    pub wait: f64,
    pub requested: f64,
    pub predicted: f64,
    pub procs: f64,
    pub submit: f64,
    pub now: f64,
    pub arrival: f64,
    pub id: f64,
    pub user_running: f64,
    pub user_waiting: f64,
    pub user_usage: f64,
    pub usage_share: f64,
    /// The values of the formula's columns (`Formula::columns`), in order.
    pub columns: Vec<f64>,
}

/// A parsed, checked formula ready to run.
#[derive(Clone, Debug)]
pub struct Formula {
    /// The text as written after `min:` / `max:` (what results and run keys record).
    pub text: String,
    /// `max:`: larger values first (the key is negated).
    pub largest_first: bool,
    program: Vec<Op>,
    /// Whether the value moves with the clock (`w`, `t`) or with other jobs (`ur`, `uw`): such a
    /// queue is sorted at every pass; otherwise it is kept in order as jobs arrive.
    pub moves: bool,
    /// Whether it reads `ur`, `uw`, `uu` or `un` (the engine then keeps per-user state).
    pub reads_users: bool,
    /// Whether it reads `uu` / `un` (the engine then keeps each user's decayed usage).
    pub reads_usage: bool,
    /// The columns of the jobs it reads (names that are not variables), in order of first use: the
    /// caller passes them with the jobs (`Workload::extra`).
    pub columns: Vec<String>,
}

/// A formula that cannot be used: the message, and the byte offset in the text it points at.
#[derive(Debug, PartialEq)]
pub struct FormulaError {
    pub message: String,
    pub at: usize,
}

impl FormulaError {
    /// The message, the text, and a caret under the place.
    pub fn render(&self, text: &str) -> String {
        let column = text[..self.at.min(text.len())].chars().count();
        format!("{}\n  {}\n  {}^", self.message, text, " ".repeat(column))
    }
}

impl fmt::Display for FormulaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.at)
    }
}

/// Parse `min:EXPR` or `max:EXPR`; the error is rendered with a caret under the text.  A name that is
/// not a variable is taken for a column of the jobs (checked when the jobs are known:
/// `parse_order_with`).
pub fn parse_order(text: &str) -> Result<Formula, String> {
    parse_order_with(text, None)
}

/// `parse_order`, with the jobs' numeric columns known: a name that is neither a variable nor one of
/// them is an error listing both.
pub fn parse_order_with(text: &str, known_columns: Option<&[&str]>) -> Result<Formula, String> {
    let (largest_first, body, offset) = if let Some(rest) = text.strip_prefix("min:") {
        (false, rest, 4)
    } else if let Some(rest) = text.strip_prefix("max:") {
        (true, rest, 4)
    } else {
        return Err(format!(
            "a queue order formula starts with min: (smallest value first) or max: (largest first), got {text:?}"
        ));
    };
    if text.len() > MAX_FORMULA_BYTES {
        return Err(format!(
            "a formula is at most {MAX_FORMULA_BYTES} bytes long, this one has {}",
            text.len()
        ));
    }
    let formula = check::compile(body, largest_first, known_columns).map_err(|e| {
        FormulaError {
            message: e.message,
            at: e.at + offset,
        }
        .render(text)
    })?;
    Ok(formula)
}

mod check;
mod eval;
mod presets;
mod syntax;

pub use presets::{preset, PRESETS};

#[cfg(test)]
mod tests;
