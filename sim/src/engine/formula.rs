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
    let formula = compile(body, largest_first, known_columns).map_err(|e| {
        FormulaError {
            message: e.message,
            at: e.at + offset,
        }
        .render(text)
    })?;
    Ok(formula)
}

fn compile(
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

impl Formula {
    /// The formula's value for `job` (NaN and infinities as computed: the caller decides).
    pub fn value(&self, job: &Job) -> f64 {
        self.value_with(|var| Formula::value_of(var, job))
    }

    fn value_of(var: Var, job: &Job) -> f64 {
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
    fn key(&self, job: &Job) -> f64 {
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

#[derive(Clone, Debug, PartialEq)]
enum TokenKind {
    Number(f64),
    Name(String),
    /// An operator or punctuation: + - * / ^ ( ) , < <= > >= == !=
    Symbol(&'static str),
}

impl TokenKind {
    fn describe(&self) -> String {
        match self {
            TokenKind::Number(n) => format!("number {n}"),
            TokenKind::Name(name) => format!("name {name:?}"),
            TokenKind::Symbol(s) => format!("{s:?}"),
        }
    }
}

#[derive(Debug)]
struct Token {
    kind: TokenKind,
    at: usize,
}

const SYMBOLS: [&str; 14] = [
    "<=", ">=", "==", "!=", "+", "-", "*", "/", "^", "(", ")", ",", "<", ">",
];

fn tokenize(text: &str) -> Result<Vec<Token>, FormulaError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == b'.' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            // An exponent: 1e6, 2.5E-3.
            if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                let mut j = i + 1;
                if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let literal = &text[start..i];
            let number: f64 = literal.parse().map_err(|_| FormulaError {
                message: format!("{literal:?} is not a number"),
                at: start,
            })?;
            // A literal a double cannot hold would silently become infinity (1e309) or zero (1e-400).
            let mantissa = literal.split(['e', 'E']).next().unwrap_or(literal);
            if !number.is_finite() {
                return Err(FormulaError {
                    message: format!(
                        "{literal} is beyond the largest number a key can hold (about 1.8e308)"
                    ),
                    at: start,
                });
            }
            if number == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b)) {
                return Err(FormulaError {
                    message: format!("{literal} is below the smallest number a key can hold (about 4.9e-324): write 0"),
                    at: start,
                });
            }
            tokens.push(Token {
                kind: TokenKind::Number(number),
                at: start,
            });
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            tokens.push(Token {
                kind: TokenKind::Name(text[start..i].to_string()),
                at: start,
            });
        } else if let Some(symbol) = SYMBOLS.iter().find(|s| text[i..].starts_with(**s)) {
            tokens.push(Token {
                kind: TokenKind::Symbol(symbol),
                at: i,
            });
            i += symbol.len();
        } else {
            let shown = text[i..].chars().next().unwrap_or('?');
            return Err(FormulaError {
                message: format!(
                    "{shown:?} is not part of the formula language (numbers, names, + - * / ^, \
                     comparisons, and, or, not, functions)"
                ),
                at: i,
            });
        }
    }
    Ok(tokens)
}

/// A value's type: formulas are checked once, so `if(w, 1, 2)` or `(w > 1) + 2` never run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Number,
    Condition,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Number => "a number",
            Kind::Condition => "a condition (true or false)",
        }
    }
}

/// Recursive descent, lowest precedence first: or; and; not; comparison; + -; * /; unary -; ^
/// (right-associative, above unary minus: -2^2 is -4); calls, names, numbers, parentheses.
struct Parser<'t> {
    /// The jobs' numeric columns, where known (else any name that is not a variable is one).
    known_columns: Option<&'t [&'t str]>,
    /// The columns read so far, in order of first use.
    columns: Vec<String>,
    tokens: &'t [Token],
    next: usize,
    program: Vec<Op>,
    /// Byte offset of the end of the text (where "expected ..." points once it ran out).
    end: usize,
    nesting: usize,
}

type Parsed = Result<Kind, FormulaError>;

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next)
    }

    fn at(&self) -> usize {
        self.peek().map_or(self.end, |t| t.at)
    }

    fn is_symbol(&self, symbol: &str) -> bool {
        matches!(self.peek(), Some(Token { kind: TokenKind::Symbol(s), .. }) if *s == symbol)
    }

    fn is_name(&self, name: &str) -> bool {
        matches!(self.peek(), Some(Token { kind: TokenKind::Name(n), .. }) if n == name)
    }

    fn expect(&mut self, symbol: &str, what: &str) -> Result<(), FormulaError> {
        if self.is_symbol(symbol) {
            self.next += 1;
            return Ok(());
        }
        Err(FormulaError {
            message: match self.peek() {
                Some(token) => format!("expected {what}, found {}", token.kind.describe()),
                None => format!("expected {what}, the formula ended"),
            },
            at: self.at(),
        })
    }

    fn want(&self, kind: Kind, got: Kind, at: usize, role: &str) -> Result<(), FormulaError> {
        if kind == got {
            return Ok(());
        }
        Err(FormulaError {
            message: format!("{role} must be {}, this is {}", kind.name(), got.name()),
            at,
        })
    }

    /// A whole expression (the formula, a parenthesis, an argument).  Parentheses, calls, signs and
    /// `not`s recurse: the nesting is bounded, so that no text can exhaust the parsing thread's stack.
    fn expression(&mut self) -> Parsed {
        self.expression_of(Self::disjunction)
    }

    /// `step`, counted in the nesting like a parenthesis (a chain of signs or of `not`s recurses).
    fn expression_of(&mut self, step: fn(&mut Self) -> Parsed) -> Parsed {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(FormulaError {
                message: format!("the formula is nested too deeply (more than {MAX_DEPTH} levels)"),
                at: self.at(),
            });
        }
        let kind = step(self);
        self.nesting -= 1;
        kind
    }

    fn disjunction(&mut self) -> Parsed {
        let or = [("or", Op::Or)];
        self.left_associative(Self::conjunction, &or, Kind::Condition, "each side of 'or'")
    }

    fn conjunction(&mut self) -> Parsed {
        let and = [("and", Op::And)];
        self.left_associative(Self::negation, &and, Kind::Condition, "each side of 'and'")
    }

    /// `operand (operator operand)*`, left-associative, where each operand must be of `kind` (which
    /// the result then is) as soon as an operator joins it: one level of the grammar.
    fn left_associative(
        &mut self,
        operand: fn(&mut Self) -> Parsed,
        operators: &[(&str, Op)],
        kind: Kind,
        role: &str,
    ) -> Parsed {
        let mut at = self.at();
        let mut got = operand(self)?;
        while let Some(&(_, op)) = operators
            .iter()
            .find(|(word, _)| self.is_symbol(word) || self.is_name(word))
        {
            self.want(kind, got, at, role)?;
            self.next += 1;
            at = self.at();
            let right = operand(self)?;
            self.want(kind, right, at, role)?;
            self.program.push(op);
            got = kind;
        }
        Ok(got)
    }

    fn negation(&mut self) -> Parsed {
        if self.is_name("not") {
            self.next += 1;
            let at = self.at();
            let kind = self.expression_of(Self::negation)?;
            self.want(Kind::Condition, kind, at, "what 'not' takes")?;
            self.program.push(Op::Not);
            return Ok(Kind::Condition);
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Parsed {
        let at = self.at();
        let kind = self.sum()?;
        let op = match self.peek().map(|t| &t.kind) {
            Some(TokenKind::Symbol("<")) => Op::Lt,
            Some(TokenKind::Symbol("<=")) => Op::Le,
            Some(TokenKind::Symbol(">")) => Op::Gt,
            Some(TokenKind::Symbol(">=")) => Op::Ge,
            Some(TokenKind::Symbol("==")) => Op::Eq,
            Some(TokenKind::Symbol("!=")) => Op::Ne,
            _ => return Ok(kind),
        };
        self.next += 1;
        self.want(Kind::Number, kind, at, "each side of a comparison")?;
        let right_at = self.at();
        let right = self.sum()?;
        self.want(Kind::Number, right, right_at, "each side of a comparison")?;
        self.program.push(op);
        Ok(Kind::Condition)
    }

    fn sum(&mut self) -> Parsed {
        let signs = [("+", Op::Add), ("-", Op::Sub)];
        self.left_associative(Self::product, &signs, Kind::Number, "what + and - take")
    }

    fn product(&mut self) -> Parsed {
        let signs = [("*", Op::Mul), ("/", Op::Div)];
        self.left_associative(Self::unary, &signs, Kind::Number, "what * and / take")
    }

    fn unary(&mut self) -> Parsed {
        if self.is_symbol("-") || self.is_symbol("+") {
            let negative = self.is_symbol("-");
            self.next += 1;
            let at = self.at();
            let kind = self.expression_of(Self::unary)?;
            self.want(Kind::Number, kind, at, "a sign's operand")?;
            if negative {
                self.program.push(Op::Neg);
            }
            return Ok(Kind::Number);
        }
        self.power()
    }

    fn power(&mut self) -> Parsed {
        let at = self.at();
        let kind = self.atom()?;
        if !self.is_symbol("^") {
            return Ok(kind);
        }
        self.next += 1;
        self.want(Kind::Number, kind, at, "what ^ takes")?;
        let right_at = self.at();
        let right = self.unary()?; // right-associative: 2^3^2 = 2^9, and 2^-1 is allowed
        self.want(Kind::Number, right, right_at, "what ^ takes")?;
        self.program.push(Op::Pow);
        Ok(Kind::Number)
    }

    fn atom(&mut self) -> Parsed {
        let Some(token) = self.peek() else {
            return Err(FormulaError {
                message: "expected a value, the formula ended".into(),
                at: self.end,
            });
        };
        let at = token.at;
        match &token.kind {
            TokenKind::Number(value) => {
                self.program.push(Op::Const(*value));
                self.next += 1;
                Ok(Kind::Number)
            }
            TokenKind::Symbol("(") => {
                self.next += 1;
                let kind = self.expression()?;
                self.expect(")", "')'")?;
                Ok(kind)
            }
            TokenKind::Name(name) => {
                let name = name.clone();
                self.next += 1;
                if self.is_symbol("(") {
                    return self.call(&name, at);
                }
                if let Some(index) = VARIABLES.iter().position(|(v, _)| *v == name) {
                    self.program.push(Op::Load(VAR_OF_NAME[index]));
                    return Ok(Kind::Number);
                }
                let is_function = FUNCTIONS.iter().any(|(f, _)| *f == name);
                let is_column = !is_function
                    && !["and", "or", "not"].contains(&name.as_str())
                    && self
                        .known_columns
                        .is_none_or(|known| known.contains(&name.as_str()));
                if is_column {
                    let index = match self.columns.iter().position(|c| *c == name) {
                        Some(index) => index,
                        None if self.columns.len() < MAX_COLUMNS => {
                            self.columns.push(name);
                            self.columns.len() - 1
                        }
                        None => {
                            return Err(FormulaError {
                                message: format!("a formula reads at most {MAX_COLUMNS} columns"),
                                at,
                            })
                        }
                    };
                    self.program.push(Op::Load(Var::Column(index as u8)));
                    return Ok(Kind::Number);
                }
                let known: Vec<&str> = VARIABLES.iter().map(|(v, _)| *v).collect();
                let columns = match self.known_columns {
                    Some(columns) if !columns.is_empty() => {
                        format!(", and the jobs' numeric columns: {}", columns.join(", "))
                    }
                    _ => String::new(),
                };
                Err(FormulaError {
                    message: if is_function {
                        format!("{name} is a function: write {name}(...)")
                    } else {
                        format!(
                            "unknown variable {name:?}; known: {}{columns}",
                            known.join(", ")
                        )
                    },
                    at,
                })
            }
            other => Err(FormulaError {
                message: format!("expected a value, found {}", other.describe()),
                at,
            }),
        }
    }

    fn call(&mut self, name: &str, at: usize) -> Parsed {
        let Some(&(_, arity)) = FUNCTIONS.iter().find(|(f, _)| *f == name) else {
            let known: Vec<&str> = FUNCTIONS.iter().map(|(f, _)| *f).collect();
            return Err(FormulaError {
                message: format!("unknown function {name:?}; known: {}", known.join(", ")),
                at,
            });
        };
        self.expect("(", "'('")?;
        let mut kinds = Vec::new();
        loop {
            let argument_at = self.at();
            kinds.push((self.expression()?, argument_at));
            if self.is_symbol(",") {
                self.next += 1;
                continue;
            }
            self.expect(")", "',' or ')'")?;
            break;
        }
        let count = kinds.len();
        let wrong_count = if arity == 0 {
            count < 2
        } else {
            count != arity
        };
        if wrong_count {
            let wanted = if arity == 0 {
                "two or more values".to_string()
            } else if arity == 1 {
                "one value".to_string()
            } else {
                "a condition and two values: if(condition, then, else)".to_string()
            };
            return Err(FormulaError {
                message: format!("{name} takes {wanted}, got {count}"),
                at,
            });
        }
        for (i, &(kind, argument_at)) in kinds.iter().enumerate() {
            let wanted = if name == "if" && i == 0 {
                Kind::Condition
            } else {
                Kind::Number
            };
            let role = if name == "if" && i == 0 {
                "if's first value".to_string()
            } else {
                format!("{name}'s values")
            };
            self.want(wanted, kind, argument_at, &role)?;
        }
        match name {
            "log" => self.program.push(Op::Ln),
            "log2" => self.program.push(Op::Log2),
            "log10" => self.program.push(Op::Log10),
            "exp" => self.program.push(Op::Exp),
            "sqrt" => self.program.push(Op::Sqrt),
            "abs" => self.program.push(Op::Abs),
            "min" => self.program.extend(std::iter::repeat_n(Op::Min, count - 1)),
            "max" => self.program.extend(std::iter::repeat_n(Op::Max, count - 1)),
            "if" => self.program.push(Op::If),
            _ => unreachable!("every function is listed"),
        }
        Ok(Kind::Number)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn job(w: f64, r: f64, n: f64) -> Job {
        Job {
            wait: w,
            requested: r,
            predicted: r / 2.0,
            procs: n,
            submit: 100.0,
            now: 100.0 + w,
            arrival: 3.0,
            id: 7.0,
            user_running: 1.0,
            user_waiting: 2.0,
            user_usage: 3600.0,
            usage_share: 0.25,
            columns: vec![w * 10.0],
        }
    }

    fn value(text: &str, j: &Job) -> f64 {
        parse_order(text).unwrap().value(j)
    }

    #[test]
    fn values_by_hand() {
        let j = job(50.0, 10.0, 4.0);
        assert_eq!(value("min:(w/r)^3*n", &j), 500.0); // 5^3 * 4
        assert_eq!(value("min:-2^2", &j), -4.0);
        assert_eq!(value("min:2^3^2", &j), 512.0);
        assert_eq!(value("min:1 - 2 - 3", &j), -4.0);
        assert_eq!(value("min:12 / 3 / 2", &j), 2.0);
        assert_eq!(value("min:if(w > 10 and not n == 4, 1, 2)", &j), 2.0);
        assert_eq!(value("min:if(w > 10 or n < 1, 1, 2)", &j), 1.0);
        assert_eq!(value("min:max(r, n, 3) + min(r, n)", &j), 14.0);
        assert_eq!(
            value(
                "min:log2(n) + log10(100) + log(exp(1)) + sqrt(16) + abs(-3)",
                &j
            ),
            12.0
        );
        assert_eq!(
            value("min:p + s + t + a + id + ur + uw", &j),
            5.0 + 100.0 + 150.0 + 3.0 + 7.0 + 1.0 + 2.0
        );
        assert_eq!(value("min:1.5e2 + 2E-1", &j), 150.2);
        assert!(value("min:w/0 - w/0", &j).is_nan());
        assert!(value("min:max(w/0 - w/0, 1)", &j).is_nan());
    }

    #[test]
    fn names_that_are_not_variables_are_columns_of_the_jobs() {
        let f = parse_order("max:think_time * 2 + w / think_time").unwrap();
        assert_eq!(f.columns, vec!["think_time"]);
        assert_eq!(f.value(&job(3.0, 1.0, 1.0)), 30.0 * 2.0 + 3.0 / 30.0);
        let g = parse_order("min:think_time + queue_rank * think_time").unwrap();
        assert_eq!(g.columns, vec!["think_time", "queue_rank"]);
    }

    #[test]
    fn the_key_negates_for_max_and_constants_fold() {
        let f = parse_order("max:w*(2+3)").unwrap();
        assert_eq!(f.key(&job(2.0, 1.0, 1.0)), -10.0);
        assert_eq!(f.program.len(), 3); // w, 5, *
        assert!(f.moves && !f.reads_users);
        assert!(!parse_order("min:r*n").unwrap().moves);
        assert!(parse_order("min:uw").unwrap().reads_users);
    }

    #[test]
    fn a_literal_a_double_cannot_hold_is_refused_not_rounded_to_infinity_or_zero() {
        let e = parse_order("min:1e309*w").unwrap_err();
        assert!(e.starts_with("1e309 is beyond the largest number"), "{e}");
        assert!(e.ends_with("\n  min:1e309*w\n      ^"), "{e}");
        let e = parse_order("min:w + 1e-400").unwrap_err();
        assert!(e.starts_with("1e-400 is below the smallest number"), "{e}");
        // What a double holds is taken: zero written as zero, the largest and a subnormal value.
        for fine in [
            "min:0e5 + w",
            "min:0.0*w",
            "min:1.7e308*w",
            "min:5e-324 + w",
        ] {
            assert!(parse_order(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn errors_point_at_the_place() {
        let e = parse_order("min:(w+)*r").unwrap_err();
        assert_eq!(e, "expected a value, found \")\"\n  min:(w+)*r\n         ^");
        let e = parse_order_with("min:w + q", Some(&["run_time", "q2"])).unwrap_err();
        assert!(
            e.starts_with("unknown variable \"q\"; known: w, r, p, n, s, t, a, id, ur, uw"),
            "{e}"
        );
        assert!(e.ends_with("\n  min:w + q\n          ^"), "{e}");
        assert!(parse_order("min:if(w, 1, 2)")
            .unwrap_err()
            .starts_with("if's first value must be a condition"));
        assert!(parse_order("min:w > 1")
            .unwrap_err()
            .starts_with("a queue order needs a number"));
        assert!(parse_order("min:(w > 1) + 2")
            .unwrap_err()
            .starts_with("what + and - take must be a number"));
        assert!(parse_order("min:log(1, 2)")
            .unwrap_err()
            .starts_with("log takes one value, got 2"));
        assert!(parse_order("min:min(1)")
            .unwrap_err()
            .starts_with("min takes two or more values"));
        assert!(parse_order("min:foo(1)")
            .unwrap_err()
            .starts_with("unknown function \"foo\""));
        assert!(parse_order("min:sqrt")
            .unwrap_err()
            .starts_with("sqrt is a function"));
        assert!(parse_order("min:w $ 2")
            .unwrap_err()
            .starts_with("'$' is not part"));
        assert!(parse_order("min:(w")
            .unwrap_err()
            .starts_with("expected ')', the formula ended"));
        assert!(parse_order("min:")
            .unwrap_err()
            .starts_with("expected a value, the formula ended"));
        assert!(parse_order("min:w w")
            .unwrap_err()
            .starts_with("unexpected name \"w\""));
        assert!(parse_order("w").unwrap_err().contains("starts with min:"));
        let long = format!("min:{}", "w+".repeat(600));
        assert!(parse_order(&long)
            .unwrap_err()
            .starts_with("a formula is at most 1000 bytes"));
        let deep = format!("min:{}w{}", "(1+".repeat(70), ")".repeat(70));
        assert!(parse_order(&deep)
            .unwrap_err()
            .contains("nested too deeply"));
        for text in [
            "min:".to_string() + &"(".repeat(990),
            "min:".to_string() + &"-".repeat(990) + "w",
        ] {
            assert!(parse_order(&text)
                .unwrap_err()
                .contains("nested too deeply"));
        }
        let wide = format!("min:{}w", "1+".repeat(100));
        assert!(parse_order(&wide).is_ok(), "a long flat sum needs no depth");
    }

    #[test]
    fn a_batch_gives_the_keys_one_by_one() {
        let jobs: Vec<Job> = (0..50)
            .map(|i| {
                job(
                    f64::from(i * 7 % 13),
                    f64::from(i % 5),
                    f64::from(1 + i % 4),
                )
            })
            .collect();
        let texts = [
            "max:(w/r)^3*n",
            "min:if(w > 3 and not r == 2, log2(n) - w, max(r, n, -w))",
            "max:w/(log2(max(n,2))*r)",
            "min:sqrt(r)*n+25600*log10(s) + exp(-w) + abs(p - t) + ur * uw - a / id",
        ];
        let mut scratch = Vec::new();
        let mut keys = Vec::new();
        for text in texts {
            let f = parse_order(text).unwrap();
            f.keys_batch(&mut keys, jobs.len(), &mut scratch, |var, column| {
                for (slot, j) in jobs.iter().enumerate() {
                    column[slot] = Formula::value_of(var, j);
                }
            });
            for (j, &k) in jobs.iter().zip(&keys) {
                let one = f.key(j);
                assert!(one.to_bits() == k.to_bits(), "{text}: {one} vs {k}");
            }
        }
    }

    #[test]
    fn every_preset_parses() {
        for (name, text, _) in PRESETS {
            assert!(parse_order(text).is_ok(), "{name}");
            assert_eq!(preset(name), Some(*text));
        }
    }
}
