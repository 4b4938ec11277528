use crate::engine;
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::str::FromStr;

create_exception!(
    _native,
    InputError,
    PyValueError,
    "A workload or settings the engine refuses: args are (what, first offending job ids, their count, kind)."
);

/// A tokenized SWF log (see `swf.rs`): numpy columns, header lines and rejected lines.
#[pyclass(frozen, get_all, module = "lakehouse._native")]
struct ParsedSwf {
    line: Py<PyArray1<i64>>,
    ints: Vec<Py<PyArray1<i64>>>,
    avg_cpu_time: Py<PyArray1<f64>>,
    comments: Vec<(i64, String)>,
    rejected: Vec<(i64, String, String)>,
    data_lines: i64,
    crlf_lines: i64,
    cr_lines: i64,
    bom: bool,
}

/// Tokenize a decompressed SWF log.
#[pyfunction]
fn parse_swf<'py>(py: Python<'py>, data: &Bound<'py, PyBytes>) -> ParsedSwf {
    let bytes: &[u8] = data.as_bytes();
    let parsed = py.detach(|| crate::swf::parse(bytes));
    ParsedSwf {
        line: parsed.line.into_pyarray(py).unbind(),
        ints: parsed
            .ints
            .into_iter()
            .map(|c| c.into_pyarray(py).unbind())
            .collect(),
        avg_cpu_time: parsed.avg_cpu_time.into_pyarray(py).unbind(),
        comments: parsed.comments,
        rejected: parsed.rejected,
        data_lines: parsed.data_lines,
        crlf_lines: parsed.crlf_lines,
        cr_lines: parsed.cr_lines,
        bom: parsed.bom,
    }
}

/// What a replay did with each job (numpy columns in input order), and the selector's choices.
#[pyclass(frozen, get_all, module = "lakehouse._native")]
struct Schedule {
    start: Py<PyArray1<i64>>,
    end: Py<PyArray1<i64>>,
    backfilled: Py<PyArray1<bool>>,
    corrections: Py<PyArray1<i64>>,
    initial_prediction: Py<PyArray1<i64>>,
    reservation: Py<PyArray1<i64>>,
    policy: Py<PyArray1<u8>>,
    periods: Py<PyArray1<u8>>,
    key_not_finite: Py<PyArray1<bool>>,
}

/// Run `f`, turning a panic into a Python RuntimeError: a bug in the engine must not take the
/// interpreter (and a user's notebook) down with it.
fn guarded<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        PyRuntimeError::new_err(format!("internal error in the simulator: {why}"))
    })
}

/// Test hook: panics inside the same guard as `simulate` (the tests check it raises RuntimeError).
#[pyfunction]
fn _panic_inside_guard() -> PyResult<()> {
    guarded(|| panic!("deliberate panic"))
}

fn choice<T: FromStr<Err = String>>(text: &str) -> PyResult<T> {
    T::from_str(text).map_err(PyValueError::new_err)
}

/// A predictor's canonical spelling (`eloss` with every parameter written out), or ValueError
/// naming what is wrong: the one place where predictor names and E-Loss parameters are checked.
#[pyfunction]
fn predictor_spec(text: &str) -> PyResult<String> {
    Ok(choice::<engine::Predictor>(text)?.to_string())
}

/// The E-Loss of each prediction (float64) of jobs that ran `run` seconds on `procs` processors, for
/// the loss of `eloss:PARAMETERS` (without the learner's penalty); ValueError for bad parameters.
#[pyfunction]
fn eloss_values<'py>(
    py: Python<'py>,
    parameters: &str,
    predicted: PyReadonlyArray1<'py, f64>,
    run: PyReadonlyArray1<'py, i64>,
    procs: PyReadonlyArray1<'py, i64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let loss: engine::Loss = choice(parameters)?;
    let (predicted, run, procs) = (predicted.as_array(), run.as_array(), procs.as_array());
    if predicted.len() != run.len() || run.len() != procs.len() {
        return Err(PyValueError::new_err(
            "predicted, run and procs must have the same length",
        ));
    }
    let values: Vec<f64> = (0..run.len())
        .map(|i| loss.value(predicted[i], procs[i], run[i]))
        .collect();
    Ok(values.into_pyarray(py))
}

/// The processors each job of a schedule ran on (`engine::allocate`): (offsets, first, last), job i's
/// intervals being `first[offsets[i]:offsets[i+1]]` to `last[...]`, inclusive; ValueError when the
/// schedule does not fit the machine.
#[pyfunction]
fn processor_allocation<'py>(
    py: Python<'py>,
    start: PyReadonlyArray1<'py, i64>,
    end: PyReadonlyArray1<'py, i64>,
    procs: PyReadonlyArray1<'py, i64>,
    machine_size: i64,
) -> PyResult<(
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
)> {
    let (start, end, procs) = (
        slice("start", &start)?,
        slice("end", &end)?,
        slice("procs", &procs)?,
    );
    let allocation = py
        .allow_threads(|| engine::allocate(start, end, procs, machine_size))
        .map_err(PyValueError::new_err)?;
    Ok((
        allocation.offsets.into_pyarray(py),
        allocation.first.into_pyarray(py),
        allocation.last.into_pyarray(py),
    ))
}

fn slice<'a>(name: &str, array: &'a PyReadonlyArray1<'_, i64>) -> PyResult<&'a [i64]> {
    array.as_slice().map_err(|_| {
        PyValueError::new_err(format!("column {name} must be a contiguous int64 array"))
    })
}

/// A replay's settings as the Python `ReplaySettings` holds them, read by attribute: the one object
/// that crosses into the engine.
#[derive(FromPyObject)]
struct Settings {
    machine_size: i64,
    algorithm: String,
    policy: String,
    backfill: String,
    #[pyo3(attribute("engine_predictor"))]
    predictor: String,
    correction: String,
    threshold: Option<i64>,
    compat: String,
    record_reservations: bool,
    selection: Option<SelectionSettings>,
    backfill_confidence: f64,
    usage_half_life: f64,
}

/// `ReplaySettings.selection`: a selector and its parameters.
#[derive(FromPyObject)]
struct SelectionSettings {
    selector: String,
    policies: Vec<String>,
    period: i64,
    decay: f64,
    #[pyo3(attribute("engine_epsilon"))]
    epsilon: f64,
    seed: u64,
}

/// The canonical spelling of a queue order: a built-in policy's or a preset's name in lower case, or
/// a formula `min:EXPR` / `max:EXPR` as written (trimmed); ValueError, with a caret under the place,
/// for one that cannot be used.  The one place queue orders are checked.
#[pyfunction]
#[pyo3(signature = (text, columns=None))]
fn policy_spec(text: &str, columns: Option<Vec<String>>) -> PyResult<String> {
    let mut formulas = Vec::new();
    let policy = engine::parse_policy(text.trim(), &mut formulas).map_err(PyValueError::new_err)?;
    if let (Some(columns), engine::Policy::Formula(index)) = (&columns, policy) {
        // The jobs' numeric columns known: a name that is neither a variable nor one of them is
        // pointed at, with the caret, listing both.
        let known: Vec<&str> = columns.iter().map(String::as_str).collect();
        engine::parse_order_with(&formulas[index as usize].spelled(), Some(&known))
            .map_err(PyValueError::new_err)?;
    }
    Ok(match policy {
        engine::Policy::Formula(index)
            if engine::PRESETS
                .iter()
                .all(|(n, _, _)| !n.eq_ignore_ascii_case(text.trim())) =>
        {
            formulas[index as usize].spelled()
        }
        _ => text.trim().to_ascii_lowercase(),
    })
}

/// The columns of the jobs a queue order reads (a formula's names that are not variables), in order.
#[pyfunction]
fn policy_columns(text: &str) -> PyResult<Vec<String>> {
    let mut formulas = Vec::new();
    engine::parse_policy(text.trim(), &mut formulas).map_err(PyValueError::new_err)?;
    Ok(formulas.into_iter().flat_map(|f| f.columns).collect())
}

/// The engine's configuration of `settings`; ValueError for an unknown choice.
fn config(settings: Settings) -> PyResult<engine::Config> {
    let mut formulas = Vec::new();
    let mut order =
        |text: &str| engine::parse_policy(text, &mut formulas).map_err(PyValueError::new_err);
    let policy = order(&settings.policy)?;
    let selection = settings
        .selection
        .map(|s| -> PyResult<engine::Selection> {
            let selector = match choice(&s.selector)? {
                engine::Selector::Egreedy { charge, .. } => engine::Selector::Egreedy {
                    epsilon: s.epsilon,
                    charge,
                },
                full => full,
            };
            Ok(engine::Selection {
                selector,
                policies: s
                    .policies
                    .iter()
                    .map(|p| order(p))
                    .collect::<PyResult<_>>()?,
                period: s.period,
                decay: s.decay,
                seed: s.seed,
            })
        })
        .transpose()?;
    Ok(engine::Config {
        machine_size: settings.machine_size,
        algorithm: choice(&settings.algorithm)?,
        policy,
        backfill: choice(&settings.backfill)?,
        predictor: choice(&settings.predictor)?,
        correction: choice(&settings.correction)?,
        threshold: settings.threshold,
        compat: choice(&settings.compat)?,
        record_reservations: settings.record_reservations,
        selection,
        confidence: settings.backfill_confidence,
        usage_half_life: settings.usage_half_life,
        formulas,
    })
}

fn input_error(bad: engine::InputError) -> PyErr {
    InputError::new_err((bad.what, bad.job_ids, bad.count, bad.kind))
}

/// Check a replay's settings without jobs: InputError (with its kind) naming what is wrong, the
/// same the replay would raise; ValueError for an unknown choice.
#[pyfunction]
fn check_settings(settings: Settings) -> PyResult<()> {
    engine::check_config(&config(settings)?).map_err(input_error)
}

/// What is wrong with a machine size, if anything (the one place its range is checked).
#[pyfunction]
fn machine_size_problem(machine_size: i64) -> Option<String> {
    engine::machine_size_problem(machine_size)
}

/// Replay a workload (numpy int64 columns, sorted by submit time) with the backfilling engine under
/// `settings` (a `ReplaySettings`); returns its Schedule.  Bad input raises InputError with the
/// offending job ids; an unknown choice, ValueError; an internal error, RuntimeError instead of
/// taking the interpreter down.
#[pyfunction]
#[pyo3(signature = (id, submit, run, requested, procs, user, prediction, settings, order=None, extra=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    id: PyReadonlyArray1<'py, i64>,
    submit: PyReadonlyArray1<'py, i64>,
    run: PyReadonlyArray1<'py, i64>,
    requested: PyReadonlyArray1<'py, i64>,
    procs: PyReadonlyArray1<'py, i64>,
    user: PyReadonlyArray1<'py, i64>,
    prediction: Option<PyReadonlyArray1<'py, i64>>,
    settings: Settings,
    order: Option<Py<PyAny>>,
    extra: Option<Vec<(String, PyReadonlyArray1<'py, f64>)>>,
) -> PyResult<Schedule> {
    let config = config(settings)?;
    let extra = extra.unwrap_or_default();
    let extra_columns = extra
        .iter()
        .map(|(name, values)| {
            values.as_slice().map(|v| (name.as_str(), v)).map_err(|_| {
                PyValueError::new_err(format!("column {name} must be a contiguous float64 array"))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let workload = engine::Workload {
        id: slice("id", &id)?,
        submit: slice("submit", &submit)?,
        run: slice("run", &run)?,
        requested: slice("requested", &requested)?,
        procs: slice("procs", &procs)?,
        user: slice("user", &user)?,
        prediction: prediction
            .as_ref()
            .map(|p| slice("prediction", p))
            .transpose()?,
        extra: extra_columns,
    };
    // The replay runs without the GIL; now and then it takes it back to look for a pending signal
    // (Ctrl-C), and gives up if one is there, which then raises here.
    let mut interrupted: Option<PyErr> = None;
    let mut last_look = std::time::Instant::now();
    let mut stop = || {
        if last_look.elapsed() < std::time::Duration::from_millis(50) {
            return false;
        }
        last_look = std::time::Instant::now();
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(signal) => {
                interrupted = Some(signal);
                true
            }
        })
    };
    // The caller's order function (policy `python`): called with the waiting queue as numpy columns
    // at each pass that sorts the queue; what it raises stops the replay and is raised here.
    let raised: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let hook = |call: &engine::HookCall| -> Result<Vec<f64>, String> {
        let function = order
            .as_ref()
            .expect("a hook is passed only with a function");
        Python::attach(|py| {
            order_keys(py, function, &workload, call).map_err(|error| {
                let text = error.to_string();
                *raised.lock().expect("not poisoned") = Some(error);
                text
            })
        })
    };
    let hook_ref: Option<engine::OrderHook> = order.as_ref().map(|_| &hook as engine::OrderHook);
    let outcome = py.detach(|| {
        guarded(|| engine::simulate_with_hook(&workload, &config, hook_ref, &mut stop))
    })?;
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(engine::Failed::Input(bad)) => return Err(input_error(bad)),
        Err(engine::Failed::Hook(why)) => {
            return Err(raised
                .into_inner()
                .expect("not poisoned")
                .unwrap_or_else(|| PyValueError::new_err(why)))
        }
    };
    let Some(outcome) = outcome else {
        return Err(interrupted.expect("a replay stops only for a signal"));
    };
    Ok(Schedule {
        start: outcome.start.into_pyarray(py).unbind(),
        end: outcome.end.into_pyarray(py).unbind(),
        backfilled: outcome.backfilled.into_pyarray(py).unbind(),
        corrections: outcome.corrections.into_pyarray(py).unbind(),
        initial_prediction: outcome.initial_prediction.into_pyarray(py).unbind(),
        reservation: outcome.reservation.into_pyarray(py).unbind(),
        policy: outcome.policy.into_pyarray(py).unbind(),
        periods: outcome.periods.into_pyarray(py).unbind(),
        key_not_finite: outcome.key_not_finite.into_pyarray(py).unbind(),
    })
}

/// The keys an order function gives the waiting queue of `call`: it is called as
/// `function(queue, now)` with `queue` a dict of int64 numpy columns (job_id, submit_time, req_time,
/// procs, user_id, prediction, wait) and must return one number per job (anything numpy turns
/// into a float64 vector).
fn order_keys(
    py: Python<'_>,
    function: &Py<PyAny>,
    w: &engine::Workload,
    call: &engine::HookCall,
) -> PyResult<Vec<f64>> {
    let column = |values: &dyn Fn(usize) -> i64| -> Vec<i64> {
        call.jobs.iter().map(|&j| values(j)).collect()
    };
    let queue = pyo3::types::PyDict::new(py);
    queue.set_item("job_id", column(&|j| w.id[j]).into_pyarray(py))?;
    queue.set_item("submit_time", column(&|j| w.submit[j]).into_pyarray(py))?;
    queue.set_item("req_time", column(&|j| w.requested[j]).into_pyarray(py))?;
    queue.set_item("procs", column(&|j| w.procs[j]).into_pyarray(py))?;
    queue.set_item("user_id", column(&|j| w.user[j]).into_pyarray(py))?;
    queue.set_item(
        "prediction",
        column(&|j| call.predicted[j]).into_pyarray(py),
    )?;
    queue.set_item("wait", column(&|j| call.now - w.submit[j]).into_pyarray(py))?;
    let returned = function.call1(py, (queue, call.now))?;
    let wrong = |why: String| {
        PyValueError::new_err(format!(
            "the order function must return one number per waiting job (a vector): {why}"
        ))
    };
    let keys = py
        .import("numpy")?
        .call_method1("asarray", (returned, "float64"))
        .map_err(|e| wrong(e.to_string()))?;
    let keys: PyReadonlyArray1<f64> = keys
        .extract()
        .map_err(|_| wrong("it returned a scalar or a table".into()))?;
    Ok(keys.as_array().to_vec())
}

/// Place tasks (f64 columns c, rho cos phi, rho sin phi) on machines: rule "first", "best" or "least";
/// with `machines` fixed, None when some task fits nowhere.  Returns each task's machine.
#[pyfunction]
#[pyo3(signature = (c, dx, dy, capacity, rule, machines=None))]
fn pack_tasks<'py>(
    py: Python<'py>,
    c: PyReadonlyArray1<'py, f64>,
    dx: PyReadonlyArray1<'py, f64>,
    dy: PyReadonlyArray1<'py, f64>,
    capacity: f64,
    rule: &str,
    machines: Option<usize>,
) -> PyResult<Option<Bound<'py, PyArray1<i64>>>> {
    let rule = match rule {
        "first" => crate::packing::Rule::First,
        "best" => crate::packing::Rule::Best,
        "least" => crate::packing::Rule::Least,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown rule {other:?}: first, best or least"
            )))
        }
    };
    let (c, dx, dy) = (c.as_slice()?, dx.as_slice()?, dy.as_slice()?);
    if dx.len() != c.len() || dy.len() != c.len() {
        return Err(PyValueError::new_err("c, dx and dy differ in length"));
    }
    let placed =
        py.detach(|| guarded(|| crate::packing::place(c, dx, dy, capacity, rule, machines)))?;
    Ok(placed.map(|where_| where_.into_pyarray(py)))
}

/// The contiguous arrays of an HMM pass: log emissions (steps x states), start, transitions.
fn hmm_inputs<'a>(
    log_b: &'a PyReadonlyArray2<'_, f64>,
    start: &'a PyReadonlyArray1<'_, f64>,
    trans: &'a PyReadonlyArray2<'_, f64>,
) -> PyResult<(&'a [f64], usize, usize, &'a [f64], &'a [f64])> {
    let shape = log_b.shape();
    let (steps, states) = (shape[0], shape[1]);
    let contiguous = |_| PyValueError::new_err("HMM arrays must be C-contiguous float64");
    Ok((
        log_b.as_slice().map_err(contiguous)?,
        steps,
        states,
        start.as_slice().map_err(contiguous)?,
        trans.as_slice().map_err(contiguous)?,
    ))
}

fn hmm_error(error: crate::hmm::HmmError) -> PyErr {
    match error {
        crate::hmm::HmmError::Shape(what) => PyValueError::new_err(what),
        crate::hmm::HmmError::Impossible(step) => PyValueError::new_err(format!(
            "the observation of step {step} has probability zero under every reachable state"
        )),
    }
}

/// One scaled forward-backward pass: (ln P(observations), gamma steps x states, xi states x states).
#[pyfunction]
fn hmm_forward_backward<'py>(
    py: Python<'py>,
    log_b: PyReadonlyArray2<'py, f64>,
    start: PyReadonlyArray1<'py, f64>,
    trans: PyReadonlyArray2<'py, f64>,
) -> PyResult<(f64, Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
    let (b, steps, states, s, a) = hmm_inputs(&log_b, &start, &trans)?;
    let pass = py
        .detach(|| guarded(|| crate::hmm::forward_backward(b, steps, states, s, a)))?
        .map_err(hmm_error)?;
    let gamma = pass.gamma.into_pyarray(py).reshape([steps, states])?;
    let xi = pass.xi.into_pyarray(py).reshape([states, states])?;
    Ok((pass.log_likelihood, gamma, xi))
}

/// ln P(observations) and the filtered state distribution after the last step.
#[pyfunction]
fn hmm_score<'py>(
    py: Python<'py>,
    log_b: PyReadonlyArray2<'py, f64>,
    start: PyReadonlyArray1<'py, f64>,
    trans: PyReadonlyArray2<'py, f64>,
) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
    let (b, steps, states, s, a) = hmm_inputs(&log_b, &start, &trans)?;
    let (log_likelihood, last) = py
        .detach(|| guarded(|| crate::hmm::score(b, steps, states, s, a)))?
        .map_err(hmm_error)?;
    Ok((log_likelihood, last.into_pyarray(py)))
}

/// The Viterbi path (int64 state per step) and its log-probability.
#[pyfunction]
fn hmm_viterbi<'py>(
    py: Python<'py>,
    log_b: PyReadonlyArray2<'py, f64>,
    start: PyReadonlyArray1<'py, f64>,
    trans: PyReadonlyArray2<'py, f64>,
) -> PyResult<(Bound<'py, PyArray1<i64>>, f64)> {
    let (b, steps, states, s, a) = hmm_inputs(&log_b, &start, &trans)?;
    let (path, best) = py
        .detach(|| guarded(|| crate::hmm::viterbi(b, steps, states, s, a)))?
        .map_err(hmm_error)?;
    let path: Vec<i64> = path.into_iter().map(|state| state as i64).collect();
    Ok((path.into_pyarray(py), best))
}

/// The crate's version and a digest of the engine's sources (see build.rs): what stored results
/// record as the engine that made them.
const ENGINE_BUILD: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "+",
    env!("LAKEHOUSE_ENGINE_DIGEST")
);

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ENGINE_BUILD", ENGINE_BUILD)?;
    m.add("SWF_MAX_SECONDS", crate::swf::MAX_SECONDS)?;
    m.add("SWF_MAX_PROCS", crate::swf::MAX_PROCS)?;
    m.add("MAX_MACHINE_SIZE", engine::MAX_MACHINE_SIZE)?;
    m.add("INPUT_ERROR_KINDS", engine::KINDS.to_vec())?;
    m.add("BUILT_IN_POLICIES", engine::BUILT_IN.to_vec())?;
    m.add("POLICY_PRESETS", engine::PRESETS.to_vec())?;
    m.add("FORMULA_VARIABLES", engine::VARIABLES.to_vec())?;
    m.add("MAX_FORMULA_BYTES", engine::MAX_FORMULA_BYTES)?;
    m.add("USAGE_HALF_LIFE", engine::USAGE_HALF_LIFE)?;
    m.add("PREDICTORS", engine::PREDICTORS.to_vec())?;
    m.add("ALGORITHMS", engine::Algorithm::NAMES.to_vec())?;
    m.add("BACKFILLS", engine::Backfill::NAMES.to_vec())?;
    m.add("CORRECTIONS", engine::Correction::NAMES.to_vec())?;
    m.add("COMPATS", engine::Compat::NAMES.to_vec())?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add_class::<ParsedSwf>()?;
    m.add_class::<Schedule>()?;
    m.add_function(wrap_pyfunction!(parse_swf, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(processor_allocation, m)?)?;
    m.add_function(wrap_pyfunction!(check_settings, m)?)?;
    m.add_function(wrap_pyfunction!(machine_size_problem, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_inside_guard, m)?)?;
    m.add_function(wrap_pyfunction!(pack_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(predictor_spec, m)?)?;
    m.add_function(wrap_pyfunction!(policy_spec, m)?)?;
    m.add_function(wrap_pyfunction!(policy_columns, m)?)?;
    m.add_function(wrap_pyfunction!(eloss_values, m)?)?;
    m.add_function(wrap_pyfunction!(hmm_forward_backward, m)?)?;
    m.add_function(wrap_pyfunction!(hmm_score, m)?)?;
    m.add_function(wrap_pyfunction!(hmm_viterbi, m)?)?;
    Ok(())
}
