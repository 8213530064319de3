//! The rate-limit form: every V2V flow gets the tightest link on its path
//! shared equally by that link's contention group.

use super::directive::DirectiveKind;
use super::scheduler::Scheduler;
use crate::time::Time;
use std::collections::BTreeSet;

impl Scheduler {
    /// Rate-limit form: rate of V2V flow (x, d) = min over P_xd of C_ij / |beta_ij|, at most C_x.
    pub(super) fn recompute_rates(&mut self, now: Time, triggers: &[u32]) {
        self.stats.events += 1;
        let mut affected: BTreeSet<u32> = triggers.iter().copied().collect();
        for &t in triggers {
            for f in self.nodes[t as usize].flows.iter() {
                for &l in f.links(&self.topo) {
                    affected.extend(self.beta[l as usize].iter().map(|&(y, _)| y));
                }
            }
        }
        for x in affected {
            self.send_rates(now, x, false);
        }
    }

    fn rates_of(&self, x: u32) -> Vec<(u32, u64)> {
        let cx = self.topo.host_bps[x as usize];
        self.nodes[x as usize]
            .flows
            .iter()
            .map(|f| {
                let rate = f
                    .links(&self.topo)
                    .iter()
                    .map(|&l| self.topo.link_bps[l as usize] / self.beta[l as usize].len().max(1) as u64)
                    .fold(cx, u64::min);
                (f.dest, rate)
            })
            .collect()
    }

    /// Send host `x` its rates if they changed (always if `refresh`).
    pub(super) fn send_rates(&mut self, now: Time, x: u32, refresh: bool) {
        if !self.nodes[x as usize].joined {
            return;
        }
        let rates = self.rates_of(x);
        if refresh || rates != self.meta[x as usize].rates {
            self.meta[x as usize].rates = rates.clone();
            self.emit(now, x, DirectiveKind::Rates { rates });
        }
    }
}
