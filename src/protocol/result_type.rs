//! `resultType` on modern results (absent means complete).

use crate::error::{Error, Result};
use serde_json::Value;

pub const COMPLETE: &str = "complete";
pub const INPUT_REQUIRED: &str = "input_required";
/// The tasks extension (SEP-2663): a `tools/call` answered with a task to poll.
pub const TASK: &str = "task";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultType {
    Complete,
    InputRequired,
    /// Valid only where the client declared the tasks extension (checked by the caller).
    Task,
}

impl ResultType {
    /// Reads `result.resultType`. Absent → complete (legacy servers); unknown → protocol error.
    /// `task` is recognised here; whether it is allowed is the request path's decision.
    pub fn of(result: &Value) -> Result<ResultType> {
        Self::of_member(result.get("resultType"))
    }

    /// As [`ResultType::of`], given the `resultType` member itself.
    pub fn of_member(member: Option<&Value>) -> Result<ResultType> {
        match member {
            None | Some(Value::Null) => Ok(ResultType::Complete),
            Some(Value::String(s)) if s == COMPLETE => Ok(ResultType::Complete),
            Some(Value::String(s)) if s == INPUT_REQUIRED => Ok(ResultType::InputRequired),
            Some(Value::String(s)) if s == TASK => Ok(ResultType::Task),
            Some(other) => Err(Error::protocol(format!("server sent an unknown resultType {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_is_complete_and_unknown_is_an_error() {
        assert_eq!(ResultType::of(&json!({})).unwrap(), ResultType::Complete);
        assert_eq!(
            ResultType::of(&json!({"resultType":"input_required"})).unwrap(),
            ResultType::InputRequired
        );
        assert_eq!(ResultType::of(&json!({"resultType":"task"})).unwrap(), ResultType::Task);
        assert!(ResultType::of(&json!({"resultType":"later"})).is_err());
    }
}
