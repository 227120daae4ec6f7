//! Parser for primary expressions and the statement-like forms of Puppet:
//! literals, calls, resources (with defaults, overrides, virtual/exported),
//! collectors, if/unless/case, and class/define/node/function/type definitions.

use std::sync::Arc;

use crate::lang::ast::{
    AttrOp, AttrOpKind, CaseOption, Definition, Expr, ExprKind, FunctionDef, NodeDef, NodeMatch,
    Param, ResourceBody, Virtuality,
};
use crate::lang::error::LResult;
use crate::lang::lexer::{P, Tok, Token};
use crate::lang::parser::Parser;

impl Parser {
    pub(crate) fn parse_primary(&mut self) -> LResult<Expr> {
        let loc = self.loc();
        let Some(tok) = self.next() else {
            return Err(self.unexpected());
        };
        let kind = match tok.tok {
            Tok::Int(i) => ExprKind::Int(i),
            Tok::Float(f) => ExprKind::Float(f),
            Tok::Str(s) => ExprKind::Str(s),
            Tok::Interp(parts) => return self.interp(parts, loc),
            Tok::Regex(r) => ExprKind::Regex(r),
            Tok::Var(v) => ExprKind::Var(v),
            Tok::P(P::LBrack) => ExprKind::Array(self.parse_list(P::RBrack)?),
            Tok::P(P::LBrace) => ExprKind::Hash(self.parse_hash_body()?),
            Tok::P(P::LParen) => {
                let saved = std::mem::replace(&mut self.no_resource, false);
                let e = self.parse_expr(0)?;
                self.no_resource = saved;
                self.expect_p(P::RParen)?;
                return Ok(e);
            }
            Tok::P(P::At) | Tok::P(P::AtAt) => {
                let virt = if tok.tok == Tok::P(P::At) {
                    Virtuality::Virtual
                } else {
                    Virtuality::Exported
                };
                let type_name = match self.next() {
                    Some(Token {
                        tok: Tok::Name(n), ..
                    }) => n,
                    Some(t) => return Err(self.syntax_at(&t)),
                    None => return Err(self.unexpected()),
                };
                return self.parse_resource(virt, type_name, loc);
            }
            Tok::ClassRef(name) => return self.parse_typeref_form(name, loc),
            Tok::Name(name) => return self.parse_name_form(name, loc),
            _ => return Err(self.syntax_at(&tok)),
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_hash_body(&mut self) -> LResult<Vec<(Expr, Expr)>> {
        let saved = std::mem::replace(&mut self.no_resource, false);
        let mut out = Vec::new();
        loop {
            if self.eat_p(P::RBrace) {
                break;
            }
            let k = self.parse_expr(0)?;
            self.expect_p(P::FatArrow)?;
            let v = self.parse_expr(0)?;
            out.push((k, v));
            if !self.eat_p(P::Comma) {
                self.expect_p(P::RBrace)?;
                break;
            }
        }
        self.no_resource = saved;
        Ok(out)
    }

    /// Does a `{` at the cursor open an attribute-operation body?
    fn brace_opens_attrs(&self) -> bool {
        if !self.is_p(P::LBrace) {
            return false;
        }
        matches!(
            (self.peek_n(1), self.peek_n(2)),
            (Some(Tok::Name(_)), Some(Tok::P(P::FatArrow)))
                | (Some(Tok::Name(_)), Some(Tok::P(P::PlusArrow)))
                | (Some(Tok::P(P::Star)), Some(Tok::P(P::FatArrow)))
        )
    }

    fn parse_typeref_form(&mut self, name: String, loc: crate::lang::error::Loc) -> LResult<Expr> {
        if matches!(self.peek_tok(), Some(t) if t.tok == Tok::P(P::LParen) && !t.space_before) {
            self.pos += 1;
            let args = self.parse_list(P::RParen)?;
            let call = Expr::new(
                ExprKind::Call {
                    name,
                    args,
                    lambda: None,
                },
                loc,
            );
            return self.parse_postfix(call);
        }
        let base = Expr::new(ExprKind::TypeRef(name.clone()), loc.clone());
        let e = self.parse_postfix(base)?;
        if self.is_p(P::LCollect) || self.is_p(P::LLCollect) {
            let exported = self.is_p(P::LLCollect);
            self.pos += 1;
            let close = if exported { P::RRCollect } else { P::RCollect };
            let query = if self.is_p(close) {
                None
            } else {
                Some(Box::new(self.parse_expr(0)?))
            };
            self.expect_p(close)?;
            let overrides = if self.is_p(P::LBrace) {
                self.pos += 1;
                let ops = self.parse_attr_ops()?;
                self.expect_p(P::RBrace)?;
                ops
            } else {
                Vec::new()
            };
            return Ok(Expr::new(
                ExprKind::Collector {
                    type_name: name,
                    exported,
                    query,
                    overrides,
                },
                loc,
            ));
        }
        if self.brace_opens_attrs()
            || (self.is_p(P::LBrace)
                && self.peek_n(1) == Some(&Tok::P(P::RBrace))
                && !self.no_resource)
        {
            self.pos += 1;
            let ops = self.parse_attr_ops()?;
            self.expect_p(P::RBrace)?;
            let kind = if matches!(e.kind, ExprKind::TypeRef(_)) {
                ExprKind::ResourceDefaults {
                    type_name: name,
                    ops,
                }
            } else {
                ExprKind::ResourceOverride {
                    target: Box::new(e),
                    ops,
                }
            };
            return Ok(Expr::new(kind, loc));
        }
        Ok(e)
    }

    fn parse_name_form(&mut self, name: String, loc: crate::lang::error::Loc) -> LResult<Expr> {
        let kind = match name.as_str() {
            "true" => ExprKind::Bool(true),
            "false" => ExprKind::Bool(false),
            "undef" => ExprKind::Undef,
            "default" => ExprKind::Default,
            "if" => return self.parse_if(loc, false),
            "unless" => return self.parse_if(loc, true),
            "case" => return self.parse_case(loc),
            "class" if matches!(self.peek(), Some(Tok::Name(_))) => {
                return self.parse_definition(loc, true);
            }
            "define" => return self.parse_definition(loc, false),
            "node" => return self.parse_node(loc),
            "function" => return self.parse_function(loc),
            "type" if matches!(self.peek(), Some(Tok::ClassRef(_))) => {
                let Some(Token {
                    tok: Tok::ClassRef(alias),
                    ..
                }) = self.next()
                else {
                    return Err(self.unexpected());
                };
                self.expect_p(P::Assign)?;
                let ty = self.parse_expr(2)?;
                return Ok(Expr::new(ExprKind::TypeAlias(alias, Box::new(ty)), loc));
            }
            _ => {
                if self.is_p(P::LParen) {
                    self.pos += 1;
                    let args = self.parse_list(P::RParen)?;
                    let lambda = self.parse_opt_lambda()?;
                    return Ok(Expr::new(ExprKind::Call { name, args, lambda }, loc));
                }
                if self.is_p(P::LBrace) && !self.no_resource {
                    return self.parse_resource(Virtuality::Real, name, loc);
                }
                ExprKind::Bare(name)
            }
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_resource(
        &mut self,
        virt: Virtuality,
        type_name: String,
        loc: crate::lang::error::Loc,
    ) -> LResult<Expr> {
        self.expect_p(P::LBrace)?;
        let saved = std::mem::replace(&mut self.no_resource, false);
        let mut bodies = Vec::new();
        loop {
            if self.is_p(P::RBrace) {
                break;
            }
            let title = self.parse_expr(0)?;
            self.expect_p(P::Colon)?;
            let ops = self.parse_attr_ops()?;
            bodies.push(ResourceBody { title, ops });
            if !self.eat_p(P::Semi) {
                break;
            }
        }
        self.no_resource = saved;
        self.expect_p(P::RBrace)?;
        Ok(Expr::new(
            ExprKind::Resource {
                virt,
                type_name,
                bodies,
            },
            loc,
        ))
    }

    /// Attribute operations up to `}` or `;` (not consumed).
    pub(crate) fn parse_attr_ops(&mut self) -> LResult<Vec<AttrOp>> {
        let mut ops = Vec::new();
        loop {
            if self.is_p(P::RBrace) || self.is_p(P::Semi) {
                break;
            }
            let loc = self.loc();
            let name = match self.next() {
                Some(Token {
                    tok: Tok::Name(n), ..
                }) => n,
                Some(Token {
                    tok: Tok::P(P::Star),
                    ..
                }) => "*".to_string(),
                Some(t) => return Err(self.syntax_at(&t)),
                None => return Err(self.unexpected()),
            };
            let kind = if name == "*" {
                self.expect_p(P::FatArrow)?;
                AttrOpKind::Splat
            } else if self.eat_p(P::FatArrow) {
                AttrOpKind::Set
            } else if self.eat_p(P::PlusArrow) {
                AttrOpKind::Append
            } else {
                return Err(self.unexpected());
            };
            let value = self.parse_expr(2)?;
            ops.push(AttrOp {
                name,
                kind,
                value,
                loc,
            });
            if !self.eat_p(P::Comma) {
                break;
            }
        }
        Ok(ops)
    }

    fn parse_cond(&mut self) -> LResult<Expr> {
        let saved = std::mem::replace(&mut self.no_resource, true);
        let c = self.parse_expr(0);
        self.no_resource = saved;
        c
    }

    fn parse_if(&mut self, loc: crate::lang::error::Loc, unless: bool) -> LResult<Expr> {
        let cond = Box::new(self.parse_cond()?);
        let then = self.parse_block()?;
        let els = if self.is_name("elsif") && !unless {
            let l = self.loc();
            self.pos += 1;
            Some(vec![self.parse_if(l, false)?])
        } else if self.is_name("else") {
            self.pos += 1;
            Some(self.parse_block()?)
        } else {
            None
        };
        let kind = if unless {
            ExprKind::Unless { cond, then, els }
        } else {
            ExprKind::If { cond, then, els }
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_case(&mut self, loc: crate::lang::error::Loc) -> LResult<Expr> {
        let subject = Box::new(self.parse_cond()?);
        self.expect_p(P::LBrace)?;
        let mut options = Vec::new();
        while !self.eat_p(P::RBrace) {
            let mut values = vec![self.parse_cond()?];
            while self.eat_p(P::Comma) {
                if self.is_p(P::Colon) {
                    break;
                }
                values.push(self.parse_cond()?);
            }
            self.expect_p(P::Colon)?;
            let body = self.parse_block()?;
            options.push(CaseOption { values, body });
        }
        Ok(Expr::new(ExprKind::Case { subject, options }, loc))
    }

    fn parse_params(&mut self) -> LResult<Vec<Param>> {
        let mut params = Vec::new();
        if !self.eat_p(P::LParen) {
            return Ok(params);
        }
        loop {
            if self.eat_p(P::RParen) {
                break;
            }
            params.push(self.parse_param()?);
            if !self.eat_p(P::Comma) {
                self.expect_p(P::RParen)?;
                break;
            }
        }
        Ok(params)
    }

    fn parse_definition(&mut self, loc: crate::lang::error::Loc, is_class: bool) -> LResult<Expr> {
        let name = match self.next() {
            Some(Token {
                tok: Tok::Name(n), ..
            }) => n.trim_start_matches("::").to_string(),
            Some(t) => return Err(self.syntax_at(&t)),
            None => return Err(self.unexpected()),
        };
        let params = self.parse_params()?;
        let parent = if is_class && self.is_name("inherits") {
            self.pos += 1;
            match self.next() {
                Some(Token {
                    tok: Tok::Name(n), ..
                }) => Some(n.trim_start_matches("::").to_string()),
                Some(t) => return Err(self.syntax_at(&t)),
                None => return Err(self.unexpected()),
            }
        } else {
            None
        };
        let body = self.parse_block()?;
        let def = Arc::new(Definition {
            name,
            params,
            parent,
            body,
            loc: loc.clone(),
        });
        let kind = if is_class {
            ExprKind::ClassDef(def)
        } else {
            ExprKind::DefineDef(def)
        };
        Ok(Expr::new(kind, loc))
    }

    fn parse_node(&mut self, loc: crate::lang::error::Loc) -> LResult<Expr> {
        let mut matches = Vec::new();
        loop {
            let m = match self.next() {
                Some(Token {
                    tok: Tok::Str(s), ..
                }) => NodeMatch::Name(s),
                Some(Token {
                    tok: Tok::Regex(r), ..
                }) => NodeMatch::Regex(r),
                Some(Token {
                    tok: Tok::Name(n), ..
                }) if n == "default" => NodeMatch::Default,
                Some(Token {
                    tok: Tok::Name(n), ..
                }) => {
                    let mut s = n;
                    while self.is_p(P::Dot) {
                        match self.peek_n(1) {
                            Some(Tok::Name(x)) => {
                                s.push('.');
                                s.push_str(x);
                                self.pos += 2;
                            }
                            Some(Tok::Int(i)) => {
                                s.push('.');
                                s.push_str(&i.to_string());
                                self.pos += 2;
                            }
                            _ => break,
                        }
                    }
                    NodeMatch::Name(s)
                }
                Some(t) => return Err(self.syntax_at(&t)),
                None => return Err(self.unexpected()),
            };
            matches.push(m);
            if !self.eat_p(P::Comma) {
                break;
            }
            if self.is_p(P::LBrace) {
                break;
            }
        }
        let body = self.parse_block()?;
        Ok(Expr::new(
            ExprKind::NodeDef(Arc::new(NodeDef {
                matches,
                body,
                loc: loc.clone(),
            })),
            loc,
        ))
    }

    fn parse_function(&mut self, loc: crate::lang::error::Loc) -> LResult<Expr> {
        let name = match self.next() {
            Some(Token {
                tok: Tok::Name(n), ..
            }) => n.trim_start_matches("::").to_string(),
            Some(t) => return Err(self.syntax_at(&t)),
            None => return Err(self.unexpected()),
        };
        let params = self.parse_params()?;
        let return_type = if self.eat_p(P::Shr) {
            Some(self.parse_primary_typeref()?)
        } else {
            None
        };
        let body = self.parse_block()?;
        Ok(Expr::new(
            ExprKind::FunctionDef(Arc::new(FunctionDef {
                name,
                params,
                return_type,
                body,
                loc: loc.clone(),
            })),
            loc,
        ))
    }
}
