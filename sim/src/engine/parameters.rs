//! The `key=value,key=value` parameters of a predictor (`eloss:...`, `hmm:...`): split and checked
//! once here, each key known and given at most once, so every predictor's errors read alike.

/// The pairs of `text` in order; an error names `what` (e.g. "eloss parameter") and the known keys.
pub fn pairs<'t>(
    text: &'t str,
    what: &str,
    keys: &[&str],
) -> Result<Vec<(&'t str, &'t str)>, String> {
    let mut found: Vec<(&str, &str)> = Vec::new();
    for pair in text.split(',').filter(|p| !p.trim().is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .ok_or_else(|| format!("{what} {pair:?} is not key=value"))?;
        if !keys.contains(&key) {
            return Err(format!(
                "unknown {what} {key:?}; expected one of: {}",
                keys.join(", ")
            ));
        }
        if found.iter().any(|&(k, _)| k == key) {
            return Err(format!("{what} {key:?} is given twice"));
        }
        found.push((key, value));
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::pairs;

    #[test]
    fn pairs_are_checked_once_for_every_predictor() {
        assert_eq!(
            pairs(" a=1, b = x ,", "p", &["a", "b"]).unwrap(),
            vec![("a", "1"), ("b", "x")]
        );
        assert_eq!(
            pairs("c=1", "p", &["a"]).unwrap_err(),
            "unknown p \"c\"; expected one of: a"
        );
        assert_eq!(
            pairs("a=1,a=2", "p", &["a"]).unwrap_err(),
            "p \"a\" is given twice"
        );
        assert_eq!(
            pairs("a", "p", &["a"]).unwrap_err(),
            "p \"a\" is not key=value"
        );
    }
}
