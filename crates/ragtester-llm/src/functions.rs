//! Targets that are functions of the process hosting the engine (`type = "function"`): a host (the Python
//! module) registers a `RagTarget` under the target's name for the length of one call, and the run finds
//! it here by that name. Nothing else is shared between host and engine, so a run directory records a
//! function target as it records any other (its name and type), and a run resumed from a shell, where no
//! function is registered, stops with a message saying where to resume it.

use crate::RagTarget;
use anyhow::{Result, bail};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

type Registry = Mutex<HashMap<String, Arc<dyn RagTarget>>>;

fn registry() -> &'static Registry {
    static REGISTRY: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Make `target` what the function target `name` calls, until [`unregister`]: the guard it returns
/// unregisters it when dropped.
pub fn register(name: &str, target: Arc<dyn RagTarget>) -> Registered {
    let mut functions = registry().lock().unwrap_or_else(PoisonError::into_inner);
    functions.insert(name.to_string(), target);
    Registered(name.to_string())
}

/// While alive, a function target stays registered.
#[must_use = "the function is unregistered when this is dropped"]
pub struct Registered(String);

impl Drop for Registered {
    fn drop(&mut self) {
        let mut functions = registry().lock().unwrap_or_else(PoisonError::into_inner);
        functions.remove(&self.0);
    }
}

/// The function registered as target `name`.
pub fn registered(name: &str) -> Result<Arc<dyn RagTarget>> {
    let functions = registry().lock().unwrap_or_else(PoisonError::into_inner);
    match functions.get(name) {
        Some(target) => Ok(target.clone()),
        None => bail!(
            "target `{name}` is a function of the program that started this run (`ragtester.run(suite, \
             target=fn)` in Python); nothing here can call it: run or resume it from that program"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TargetReply, TargetRequest};

    struct Echo;

    #[async_trait::async_trait]
    impl RagTarget for Echo {
        fn name(&self) -> String {
            "echo".into()
        }
        async fn ask(&self, request: &TargetRequest<'_>) -> Result<TargetReply> {
            Ok(TargetReply {
                answer: request.query.to_string(),
                contexts: vec![],
                citations: vec![],
                tool_calls: None,
            })
        }
    }

    #[test]
    fn a_function_is_found_only_while_registered() {
        let guard = register("echo-fn", Arc::new(Echo));
        assert_eq!(registered("echo-fn").unwrap().name(), "echo");
        drop(guard);
        let error = registered("echo-fn").err().unwrap().to_string();
        assert!(
            error.contains("run or resume it from that program"),
            "{error}"
        );
    }
}
