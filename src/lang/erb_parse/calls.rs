//! Method calls in the ERB Ruby subset: arguments in parentheses or
//! without them (`x.join ', '`), trailing `k => v` hash arguments, and
//! `do |a, (b, c)| ... end` / `{ |x| ... }` blocks.

use super::{Block, PResult, Parser, RExpr, describe};
use crate::lang::erb_lex::Tok;

impl Parser {
    /// Arguments and block after a method name.
    pub(super) fn call_rest(&mut self, recv: Option<RExpr>, name: String) -> PResult<RExpr> {
        let mut args = Vec::new();
        if self.is_op("(") && !self.space_before() {
            self.pos += 1;
            args = self.list(")")?;
        } else if self.command_arg_follows() {
            loop {
                args.push(self.arg()?);
                if !self.eat_op(",") {
                    break;
                }
                self.skip_nl();
            }
        }
        let block = self.block()?;
        Ok(RExpr::Call(
            recv.map(Box::new),
            name,
            args,
            block.map(Box::new),
        ))
    }

    /// Does a parenthesis-less argument start here (`x.join ', '`)?
    fn command_arg_follows(&self) -> bool {
        if !self.space_before() {
            return false;
        }
        match self.peek() {
            Some(Tok::Str(_) | Tok::Int(_) | Tok::Float(_) | Tok::Sym(_) | Tok::IVar(_)) => true,
            Some(Tok::Words(_) | Tok::Const(_)) => true,
            Some(Tok::Regex(_)) => true,
            Some(Tok::Ident(i)) => !matches!(
                i.as_str(),
                "if" | "unless"
                    | "and"
                    | "or"
                    | "do"
                    | "then"
                    | "end"
                    | "else"
                    | "elsif"
                    | "when"
                    | "in"
                    | "while"
                    | "until"
            ),
            Some(Tok::Op("[")) => true,
            _ => false,
        }
    }

    fn arg(&mut self) -> PResult<RExpr> {
        if self.eat_op("*") || self.eat_op("&") {
            return self.ternary();
        }
        let e = self.expr()?;
        if self.eat_op("=>") {
            // Trailing `k => v` arguments form one hash.
            self.skip_nl();
            let v = self.expr()?;
            let mut pairs = vec![(e, v)];
            while self.is_op(",") && !matches!(self.peek_at(1), Some(Tok::Op(")"))) {
                self.pos += 1;
                self.skip_nl();
                let k = self.expr()?;
                self.expect_op("=>")?;
                let v = self.expr()?;
                pairs.push((k, v));
            }
            return Ok(RExpr::Hash(pairs));
        }
        Ok(e)
    }

    pub(super) fn list(&mut self, close: &str) -> PResult<Vec<RExpr>> {
        let mut out = Vec::new();
        loop {
            self.skip_nl();
            if self.eat_op(close) {
                return Ok(out);
            }
            out.push(self.arg()?);
            self.skip_nl();
            if !self.eat_op(",") {
                self.skip_nl();
                self.expect_op(close)?;
                return Ok(out);
            }
        }
    }

    fn block(&mut self) -> PResult<Option<Block>> {
        let close = if self.eat_kw("do") {
            "end"
        } else if self.is_op("{") {
            self.pos += 1;
            "}"
        } else {
            return Ok(None);
        };
        self.skip_nl();
        let mut params: Vec<Vec<String>> = Vec::new();
        let mut group: Option<Vec<String>> = None;
        if self.eat_op("||") {
        } else if self.eat_op("|") {
            loop {
                match self.bump() {
                    Some(Tok::Ident(n)) => match group.as_mut() {
                        Some(g) => g.push(n),
                        None => params.push(vec![n]),
                    },
                    Some(Tok::Op("(")) => group = Some(Vec::new()),
                    Some(Tok::Op(")")) => params.extend(group.take()),
                    Some(Tok::Op("," | "*" | "&")) => continue,
                    Some(Tok::Op("|")) => break,
                    other => {
                        return Err(format!("bad block parameter {}", describe(other.as_ref())));
                    }
                }
            }
        }
        self.locals.push(params.iter().flatten().cloned().collect());
        let body = self.stmts(&[close]);
        self.locals.pop();
        let body = body?;
        if close == "end" {
            self.expect_kw("end")?;
        } else {
            self.expect_op("}")?;
        }
        Ok(Some(Block { params, body }))
    }
}
