//! Which processors each job of a schedule ran on: the replay has no topology (any free processors
//! serve), so an allocation is one that the schedule allows, made after the replay by a sweep over
//! the starts and ends.  Batsim's and evalys' jobs files (`allocated_resources`) need one.
//!
//! Compiled because the sweep keeps the machine's free processors as a set of intervals and visits
//! every job once: on CEA-Curie (295,540 jobs on 93,312 processors) an interpreted sweep takes minutes.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// Each job's processors as closed intervals [first, last]: job i's are
/// `first[offsets[i]..offsets[i + 1]]` (and `last` likewise), in ascending order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    pub offsets: Vec<i64>,
    pub first: Vec<i64>,
    pub last: Vec<i64>,
}

/// The free processors, as disjoint intervals first -> last (inclusive), merged when adjacent.
struct Free(BTreeMap<i64, i64>);

impl Free {
    /// The `count` lowest free processors, taken out of the set (the caller checked there are enough).
    fn take(&mut self, mut count: i64, out: &mut Vec<(i64, i64)>) {
        while count > 0 {
            let (&first, &last) = self.0.iter().next().expect("enough free processors");
            self.0.remove(&first);
            let taken = count.min(last - first + 1);
            out.push((first, first + taken - 1));
            if first + taken <= last {
                self.0.insert(first + taken, last);
            }
            count -= taken;
        }
    }

    /// Give back [first, last], merged with the free intervals it touches.
    fn give(&mut self, mut first: i64, mut last: i64) {
        if let Some((&before, &end)) = self.0.range(..first).next_back() {
            if end + 1 == first {
                self.0.remove(&before);
                first = before;
            }
        }
        if let Some(end) = self.0.remove(&(last + 1)) {
            last = end;
        }
        self.0.insert(first, last);
    }
}

/// An allocation of `procs[i]` processors (numbered 0 .. machine_size - 1) to each job for
/// [start[i], end[i]): jobs are taken by start (ties by their order in the input), every job whose
/// end is at or before that start gives its processors back first, and a job takes the lowest free
/// ones.  An error names the first job the machine cannot hold (the schedule is not one of it).
pub fn allocate(
    start: &[i64],
    end: &[i64],
    procs: &[i64],
    machine_size: i64,
) -> Result<Allocation, String> {
    let n = start.len();
    if end.len() != n || procs.len() != n {
        return Err("start, end and procs must have the same length".into());
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (start[i], i));
    let mut free = Free(BTreeMap::new());
    if machine_size > 0 {
        free.0.insert(0, machine_size - 1);
    }
    let mut available = machine_size;
    let mut running: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut ranges: Vec<Vec<(i64, i64)>> = vec![Vec::new(); n];
    for &job in &order {
        if end[job] < start[job] || procs[job] < 0 {
            return Err(format!(
                "job at row {job}: ends before it starts or has a negative width"
            ));
        }
        while let Some(&Reverse((ended, done))) = running.peek() {
            if ended > start[job] {
                break;
            }
            running.pop();
            for &(first, last) in &ranges[done] {
                free.give(first, last);
                available += last - first + 1;
            }
        }
        if procs[job] > available {
            return Err(format!(
                "job at row {job} needs {} processors at {} s, when {available} of {machine_size} are free: \
                 the schedule does not fit the machine",
                procs[job], start[job]
            ));
        }
        let mut taken = Vec::new();
        free.take(procs[job], &mut taken);
        available -= procs[job];
        ranges[job] = taken;
        running.push(Reverse((end[job], job)));
    }
    let mut out = Allocation {
        offsets: Vec::with_capacity(n + 1),
        ..Allocation::default()
    };
    out.offsets.push(0);
    for job_ranges in ranges {
        for (first, last) in job_ranges {
            out.first.push(first);
            out.last.push(last);
        }
        out.offsets.push(out.first.len() as i64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(a: &Allocation, job: usize) -> Vec<(i64, i64)> {
        let (from, to) = (a.offsets[job] as usize, a.offsets[job + 1] as usize);
        a.first[from..to]
            .iter()
            .copied()
            .zip(a.last[from..to].iter().copied())
            .collect()
    }

    #[test]
    fn a_hand_made_schedule_gets_the_lowest_free_processors() {
        // 4 processors.  Job 0: 2 for [0, 10), processors 0-1; job 1: 1 for [0, 5), processor 2;
        // job 2: 2 for [5, 8), when job 1 has given 2 back: 2-3; job 3: all 4 at 10.
        let a = allocate(&[0, 0, 5, 10], &[10, 5, 8, 12], &[2, 1, 2, 4], 4).unwrap();
        assert_eq!(of(&a, 0), vec![(0, 1)]);
        assert_eq!(of(&a, 1), vec![(2, 2)]);
        assert_eq!(of(&a, 2), vec![(2, 3)]);
        assert_eq!(of(&a, 3), vec![(0, 3)]);
    }

    #[test]
    fn freed_intervals_merge_and_fragments_are_used_in_order() {
        // 7 processors: three 2-wide jobs (0-1, 2-3, 4-5), the middle one ends at 1; a 3-wide job
        // starting then takes the freed 2-3 and the lowest other free one, 6.
        let a = allocate(&[0, 0, 0, 1], &[9, 1, 9, 5], &[2, 2, 2, 3], 7).unwrap();
        assert_eq!(of(&a, 3), vec![(2, 3), (6, 6)]);
    }

    #[test]
    fn a_schedule_wider_than_the_machine_is_refused() {
        let e = allocate(&[0, 0], &[5, 5], &[3, 2], 4).unwrap_err();
        assert!(
            e.contains("job at row 1 needs 2 processors at 0 s, when 1 of 4 are free"),
            "{e}"
        );
    }

    #[test]
    fn a_job_of_no_duration_frees_its_processors_for_the_next_start() {
        let a = allocate(&[0, 0], &[0, 3], &[4, 4], 4).unwrap();
        assert_eq!((of(&a, 0), of(&a, 1)), (vec![(0, 3)], vec![(0, 3)]));
    }
}
