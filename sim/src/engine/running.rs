//! The running jobs in order of predicted end, for shadow times and the pyss "due" count.
//!
//! A sorted vector rather than a BTreeSet: a few dozen to a few hundred jobs run at once on the logs
//! we replay, where a binary search and a short memmove beat the tree's node work, and the shadow
//! walk reads contiguous memory with the processors inline.

#[derive(Default)]
pub struct Running {
    /// (predicted end, job, processors), sorted by (predicted end, job).
    jobs: Vec<(i64, usize, i64)>,
}

impl Running {
    fn position(&self, predicted_end: i64, job: usize) -> Result<usize, usize> {
        self.jobs
            .binary_search_by(|&(end, j, _)| (end, j).cmp(&(predicted_end, job)))
    }

    pub fn insert(&mut self, predicted_end: i64, job: usize, procs: i64) {
        let at = self.position(predicted_end, job).unwrap_or_else(|at| at);
        self.jobs.insert(at, (predicted_end, job, procs));
    }

    pub fn remove(&mut self, predicted_end: i64, job: usize) {
        if let Ok(at) = self.position(predicted_end, job) {
            self.jobs.remove(at);
        }
    }

    /// (predicted end, job, processors) in order of predicted end.
    pub fn iter(&self) -> impl Iterator<Item = &(i64, usize, i64)> {
        self.jobs.iter()
    }

    /// Those predicted to end at or before `t`.
    pub fn ending_by(&self, t: i64) -> &[(i64, usize, i64)] {
        let end = self.jobs.partition_point(|&(end, _, _)| end <= t);
        &self.jobs[..end]
    }
}

#[cfg(test)]
mod tests {
    use super::Running;

    #[test]
    fn keeps_predicted_end_order() {
        let mut r = Running::default();
        for (end, job) in [(50, 1), (10, 2), (50, 0), (30, 3)] {
            r.insert(end, job, 1);
        }
        let order: Vec<usize> = r.iter().map(|&(_, job, _)| job).collect();
        assert_eq!(order, vec![2, 3, 0, 1]);
        r.remove(50, 0);
        assert_eq!(r.ending_by(50).len(), 3);
        assert_eq!(r.ending_by(29).len(), 1);
    }
}
