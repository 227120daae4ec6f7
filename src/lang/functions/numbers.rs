//! Number functions: `abs`, `min` and `max`.

use crate::lang::eval::control::EvalResult;
use crate::lang::eval::{Call, Evaluator};
use crate::lang::functions::{Builder, Family, any, sig};
use crate::lang::values::value::{Value, compare};

pub fn register(b: &mut Builder) {
    let f = Family::Numbers;
    b.add(&["abs"], f, sig("Numeric").req("value", any()), abs);
    b.add(
        &["min", "max"],
        f,
        sig("Any").rest("values", any()),
        min_max,
    );
}

fn abs(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let a0 = c.arg(0);
    Ok(match a0 {
        Value::Int(i) => Value::Int(i.wrapping_abs()),
        Value::Float(f) => Value::Float(f.abs()),
        other => other,
    })
}

fn min_max(_: &mut Evaluator<'_>, c: Call<'_>) -> EvalResult<Value> {
    let args = &c.args;
    let name = c.name;
    Ok({
        let mut best: Option<Value> = None;
        for a in args {
            best = Some(match best {
                None => a.clone(),
                Some(b) => {
                    let ord = compare(a, &b).unwrap_or(std::cmp::Ordering::Equal);
                    let take = if name == "min" {
                        ord.is_lt()
                    } else {
                        ord.is_gt()
                    };
                    if take { a.clone() } else { b }
                }
            });
        }
        best.unwrap_or(Value::Undef)
    })
}
