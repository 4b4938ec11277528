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
            // The same bits, but for a NaN's sign, which x86 sets by the instruction that made it
            // (0/0 in a debug build's scalar code against its vector code): a NaN key is a NaN either way.
            let same = one.to_bits() == k.to_bits() || (one.is_nan() && k.is_nan());
            assert!(same, "{text}: {one} vs {k}");
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
