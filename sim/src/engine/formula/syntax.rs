//! A formula's text: its tokens, and the parser that turns them into a typed program.

use super::{FormulaError, Op, Var, FUNCTIONS, MAX_COLUMNS, MAX_DEPTH, VARIABLES, VAR_OF_NAME};

#[derive(Clone, Debug, PartialEq)]
pub(super) enum TokenKind {
    Number(f64),
    Name(String),
    /// An operator or punctuation: + - * / ^ ( ) , < <= > >= == !=
    Symbol(&'static str),
}

impl TokenKind {
    pub(super) fn describe(&self) -> String {
        match self {
            TokenKind::Number(n) => format!("number {n}"),
            TokenKind::Name(name) => format!("name {name:?}"),
            TokenKind::Symbol(s) => format!("{s:?}"),
        }
    }
}

#[derive(Debug)]
pub(super) struct Token {
    pub(super) kind: TokenKind,
    pub(super) at: usize,
}

const SYMBOLS: [&str; 14] = [
    "<=", ">=", "==", "!=", "+", "-", "*", "/", "^", "(", ")", ",", "<", ">",
];

pub(super) fn tokenize(text: &str) -> Result<Vec<Token>, FormulaError> {
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
pub(super) enum Kind {
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
pub(super) struct Parser<'t> {
    /// The jobs' numeric columns, where known (else any name that is not a variable is one).
    pub(super) known_columns: Option<&'t [&'t str]>,
    /// The columns read so far, in order of first use.
    pub(super) columns: Vec<String>,
    pub(super) tokens: &'t [Token],
    pub(super) next: usize,
    pub(super) program: Vec<Op>,
    /// Byte offset of the end of the text (where "expected ..." points once it ran out).
    pub(super) end: usize,
    pub(super) nesting: usize,
}

type Parsed = Result<Kind, FormulaError>;

impl Parser<'_> {
    pub(super) fn peek(&self) -> Option<&Token> {
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
    pub(super) fn expression(&mut self) -> Parsed {
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
