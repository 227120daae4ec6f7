//! Keyword forms of the ERB Ruby subset: `if`/`unless` (with `elsif`/
//! `else`), `case`/`when`, `for ... in`, `next`/`break`, `defined?`,
//! `begin ... end`, and the fallback from an identifier to a local variable
//! or a method call.

use super::{PResult, Parser, RExpr, describe};
use crate::lang::erb_lex::Tok;

impl Parser {
    pub(super) fn ident(&mut self, n: String) -> PResult<RExpr> {
        Ok(match n.as_str() {
            "nil" => RExpr::Nil,
            "true" => RExpr::Bool(true),
            "false" => RExpr::Bool(false),
            "self" => RExpr::SelfRef,
            "if" | "unless" => {
                let unless = n == "unless";
                let mut arms = Vec::new();
                let c = self.expr_stmt()?;
                self.eat_kw("then");
                let body = self.stmts(&["elsif", "else", "end"])?;
                arms.push((if unless { RExpr::Not(Box::new(c)) } else { c }, body));
                let mut els = Vec::new();
                loop {
                    if self.eat_kw("elsif") {
                        let c = self.expr_stmt()?;
                        self.eat_kw("then");
                        arms.push((c, self.stmts(&["elsif", "else", "end"])?));
                    } else if self.eat_kw("else") {
                        els = self.stmts(&["end"])?;
                    } else {
                        self.expect_kw("end")?;
                        break;
                    }
                }
                RExpr::If(arms, els)
            }
            "case" => {
                let subject = if matches!(self.peek(), Some(Tok::Nl)) {
                    None
                } else {
                    Some(Box::new(self.expr_stmt()?))
                };
                self.skip_nl();
                let mut whens = Vec::new();
                let mut els = Vec::new();
                loop {
                    if self.eat_kw("when") {
                        let mut vals = vec![self.expr()?];
                        while self.eat_op(",") {
                            self.skip_nl();
                            vals.push(self.expr()?);
                        }
                        self.eat_kw("then");
                        whens.push((vals, self.stmts(&["when", "else", "end"])?));
                    } else if self.eat_kw("else") {
                        els = self.stmts(&["end"])?;
                    } else {
                        self.expect_kw("end")?;
                        break;
                    }
                }
                RExpr::Case(subject, whens, els)
            }
            "for" => {
                let mut vars = Vec::new();
                loop {
                    match self.bump() {
                        Some(Tok::Ident(v)) if v != "in" => {
                            self.declare(&v);
                            vars.push(v);
                        }
                        Some(Tok::Op(",")) => {}
                        Some(Tok::Ident(_)) => break,
                        other => return Err(format!("unexpected {}", describe(other.as_ref()))),
                    }
                }
                let iter = self.expr_stmt()?;
                self.eat_kw("do");
                let body = self.stmts(&["end"])?;
                self.expect_kw("end")?;
                RExpr::For(vars, Box::new(iter), body)
            }
            "next" | "break" => {
                let v = match self.peek() {
                    None | Some(Tok::Nl | Tok::OutEnd | Tok::Op("}")) => None,
                    Some(Tok::Ident(i)) if i == "if" || i == "unless" || i == "end" => None,
                    _ => Some(Box::new(self.expr()?)),
                };
                if n == "next" {
                    RExpr::Next(v)
                } else {
                    RExpr::Break(v)
                }
            }
            "defined?" => {
                let paren = self.eat_op("(");
                let e = self.expr()?;
                if paren {
                    self.expect_op(")")?;
                }
                RExpr::Defined(Box::new(e))
            }
            "begin" => {
                let body = self.stmts(&["end"])?;
                self.expect_kw("end")?;
                RExpr::If(vec![(RExpr::Bool(true), body)], Vec::new())
            }
            "then" | "do" | "end" | "else" | "elsif" | "when" | "and" | "or" | "in" => {
                return Err(format!("unexpected '{n}'"));
            }
            _ if self.is_local(&n) && (self.space_before() || !self.is_op("(")) => RExpr::Local(n),
            _ => self.call_rest(None, n)?,
        })
    }
}
