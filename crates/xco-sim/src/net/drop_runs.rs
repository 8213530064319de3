//! Drop episodes per input port: how many runs of k consecutive drops each
//! input of each switch port suffered (the TCP Outcast paper's evidence of
//! port blackout, spec `outcast.md`).
//!
//! A *run* at (output port, input) is a maximal sequence of drops of frames
//! from that input with no frame from that input admitted in between; frames
//! from other inputs may be admitted meanwhile (that is the blackout: the
//! other input keeps winning the free slot). The paper counts per input port,
//! and so does this module; a per-output-port count (drops with no admission
//! from any input in between) is not built.
//!
//! Cost: nothing on an admitted arrival. The state lives apart from the
//! per-packet counters and is touched on drops only: a drop compares the
//! input's admissions so far (its arrivals minus its arrival drops, both
//! counted anyway) with the figure at its previous drop; equal means the run
//! goes on, different means the previous run ended and is entered in the
//! histogram. A run still open when the table is read counts as ended there.
//! Histograms are allocated on an input's first drop only (a few per run).
//!
//! Runs longer than [`MAX_RUN`] − 1 are counted in the last bucket, `k =`
//! [`MAX_RUN`], which means "`MAX_RUN` or more"; the longest run is kept exactly.

/// Runs of this many drops or more share the histogram's last bucket.
pub const MAX_RUN: usize = 64;

/// Drop-run state of one (port, input).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RunState {
    /// Frames from this input dropped on arrival (evictions not counted).
    arrival_drops: u64,
    /// Admissions from this input (arrivals − arrival drops) at its last drop.
    admitted_at_last_drop: u64,
    /// Length of the open run (0: none).
    run: u32,
    /// Histogram slot + 1 (0: no drop yet, no slot).
    slot: u32,
}

/// One input's histogram: `episodes[k - 1]` runs of exactly k drops (the last, k ≥ [`MAX_RUN`]).
#[derive(Clone, Debug)]
pub struct RunHistogram {
    /// Episodes by run length.
    pub episodes: [u64; MAX_RUN],
    /// Longest run seen, drops.
    pub longest: u64,
}

/// Drop runs of every counted (port, input), laid out as the net's per-input counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct DropRuns {
    state: Vec<RunState>,
    hist: Vec<RunHistogram>,
}

impl DropRuns {
    /// State for `n_inputs` counted (port, input) pairs.
    pub(crate) fn new(n_inputs: usize) -> DropRuns {
        DropRuns {
            state: vec![RunState::default(); n_inputs],
            hist: Vec::new(),
        }
    }

    /// Count a drop at counter index `at` whose input has had `arrived`
    /// arrivals (this frame included if it is an arrival drop); `on_arrival`
    /// false for a frame evicted from the queue after admission.
    #[cold]
    pub(crate) fn on_drop(&mut self, at: usize, arrived: u64, on_arrival: bool) {
        let s = &mut self.state[at];
        if on_arrival {
            s.arrival_drops += 1;
        }
        let admitted = arrived - s.arrival_drops;
        if s.run > 0 && admitted == s.admitted_at_last_drop {
            s.run += 1;
        } else {
            if s.slot == 0 {
                self.hist.push(RunHistogram {
                    episodes: [0; MAX_RUN],
                    longest: 0,
                });
                s.slot = self.hist.len() as u32;
            }
            if s.run > 0 {
                close(&mut self.hist[s.slot as usize - 1], s.run);
            }
            s.run = 1;
        }
        s.admitted_at_last_drop = admitted;
    }

    /// The histogram at counter index `at`, open run counted as ended (`None`: no drop there).
    pub(crate) fn histogram(&self, at: usize) -> Option<RunHistogram> {
        let s = &self.state[at];
        if s.slot == 0 {
            return None;
        }
        let mut h = self.hist[s.slot as usize - 1].clone();
        if s.run > 0 {
            close(&mut h, s.run);
        }
        Some(h)
    }
}

/// Enter a finished run of `run` drops into `h`.
fn close(h: &mut RunHistogram, run: u32) {
    h.episodes[(run as usize).min(MAX_RUN) - 1] += 1;
    h.longest = h.longest.max(run as u64);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed a pattern of one input's arrivals: `true` dropped, `false` admitted.
    fn feed(pattern: &[bool]) -> RunHistogram {
        let mut r = DropRuns::new(1);
        for (i, &dropped) in pattern.iter().enumerate() {
            if dropped {
                r.on_drop(0, i as u64 + 1, true);
            }
        }
        r.histogram(0).expect("a drop")
    }

    #[test]
    fn runs_are_drops_with_no_admission_between() {
        let d = true;
        let a = false;
        // runs: 2, 1, 3 (open at the end)
        let h = feed(&[a, d, d, a, a, d, a, d, d, d]);
        assert_eq!(&h.episodes[..4], &[1, 1, 1, 0]);
        assert_eq!(h.longest, 3);
    }

    #[test]
    fn an_eviction_continues_a_run_unless_a_frame_was_admitted() {
        let mut r = DropRuns::new(1);
        r.on_drop(0, 1, true); // arrival 1 dropped
        r.on_drop(0, 1, false); // an older frame evicted: same run
        r.on_drop(0, 3, true); // arrival 2 admitted, arrival 3 dropped: new run
        let h = r.histogram(0).unwrap();
        assert_eq!(&h.episodes[..3], &[1, 1, 0]);
    }

    #[test]
    fn long_runs_share_the_last_bucket_and_the_longest_is_exact() {
        let h = feed(&[true; MAX_RUN + 10]);
        assert_eq!(h.episodes[MAX_RUN - 1], 1);
        assert_eq!(h.longest, MAX_RUN as u64 + 10);
    }

    #[test]
    fn an_input_without_drops_has_no_histogram() {
        assert!(DropRuns::new(2).histogram(1).is_none());
    }
}
