//! FQ-CoDel, Flow Queue CoDel (RFC 8290): packets are hashed by flow into `flows` sub-queues
//! (§4.1.1), each managed by its own CoDel (RFC 8289, [`CodelState`]), and served by deficit
//! round robin in bytes over two lists of active queues (§4.2): a queue that becomes active joins
//! the *new* list with a quantum of credit and is served before any *old* queue, so a sparse flow
//! (a DNS query, an ACK stream, a flow restarting) meets no standing queue.
//!
//! The scheduler is §4.2–4.3 as written, in [`Discipline::next_queue`]: the head of the new list,
//! else of the old list, is examined; one without credit (deficit ≤ 0) gets a quantum more and
//! goes to the end of the old list; an empty one leaves the new list for the end of the old list
//! (so a flow cannot regain priority by emptying its queue) or, if it was old, leaves the lists
//! (its CoDel state is reset, as `codel_dequeue` finding nothing does in Linux); otherwise its
//! head packet is sent. CoDel runs in [`Discipline::dequeue`] on that packet, with its sojourn
//! time and the packets its sub-queue has left; a packet CoDel drops costs no credit (Linux
//! charges only what leaves), and the port asks [`Discipline::next_queue`] again.
//!
//! Sizes: the port gives packet sizes in data packets of the link (1 for data, less for an ACK);
//! they are counted here in whole bytes (× [`LinkContext::packet_size_bytes`], rounded), so the
//! quantum is the RFC's and Linux's byte quantum.
//!
//! Overflow (§4.1.3): the buffer is the link's (Linux's `limit`). When an arrival overflows it,
//! the head of the queue with the most bytes is dropped, one packet per overflowing arrival (the
//! RFC's rule); Linux 6.x drops a batch from that queue instead (up to `drop_batch_size` = 64
//! packets, until half its bytes are gone), which amortizes its scan over 1024 queues; here the
//! scan covers only the active queues. Ties go to the lowest-numbered queue, as Linux's strict
//! `>` scan.
//!
//! Classification: Linux hashes the 5-tuple with a random perturbation per qdisc; here a flow's
//! data and its ACKs are two keys (`flow`, `is_ack`) hashed by a fixed SplitMix64 finalizer (no
//! random seed: runs are reproducible) and scaled to `flows` buckets as Linux's
//! `reciprocal_scale`. Distinct flows may collide in a bucket and then share it, as in Linux.
//!
//! Not modelled: Linux's `memory_limit`, `ce_threshold`, `drop_batch_size` and per-packet
//! `quantum` accounting of GSO super-packets.

use super::codel::{check_target, CodelState, INTERVAL_S, TARGET_S};
use super::{
    signal, Arrival, Buffer, Departure, Discipline, Ecn, LinkContext, QueueParams, Site, Verdict,
};
use crate::error::Result;
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;
use std::collections::VecDeque;

/// RFC 8290 §5.2 / Linux `sch_fq_codel.c` 6.x (`q->flows_cnt = 1024`): 1024 flow queues.
pub const FLOWS: f64 = 1024.0;
/// Linux 6.x caps `flows` at 65536 (`fq_codel_change`: `flows_cnt > 65536` is EINVAL).
const FLOWS_MAX: f64 = 65536.0;
/// RFC 8290 §5.1 / Linux (`q->quantum = psched_mtu(dev)`): one MTU, 1514 bytes on Ethernet.
pub const QUANTUM_BYTES: f64 = 1514.0;
/// Linux 6.x: a quantum below 256 bytes is raised to 256; above `FQ_CODEL_QUANTUM_MAX`
/// (1 << 20) it is refused.
const QUANTUM_MIN: f64 = 256.0;
const QUANTUM_MAX: f64 = 1_048_576.0;

/// FQ-CoDel's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FqCodelParams {
    /// Flow queues (hash buckets).
    pub flows: f64,
    /// Bytes of credit a queue gets per round of the deficit round robin.
    pub quantum: f64,
    /// Each queue's CoDel target: acceptable standing sojourn time, seconds (RFC 8290 §5.2.2).
    pub target: f64,
    /// Each queue's CoDel interval, seconds (RFC 8290 §5.2.3).
    pub interval: f64,
    /// Mark ECN-capable packets CE instead of dropping them: on by default in Linux fq_codel
    /// (`q->cparams.ecn = true`) and recommended by RFC 8290 §5.2.6.
    pub ecn: bool,
}

impl QueueParams for FqCodelParams {
    const NAME: &'static str = "fq_codel";
    const ABOUT: &'static str =
        "FQ-CoDel (RFC 8290): 1024 flow queues served by byte DRR, new flows first, CoDel in each";
    // A scheduler over per-flow queues has no fluid law (the fluid engine keeps one shared
    // queue per link): the fluid engine refuses it.
    const FLUID: bool = false;

    fn read(p: &mut Params, _site: Site) -> Result<Self> {
        let q = FqCodelParams {
            flows: p.f64(
                "flows",
                FLOWS,
                |v| v.fract() == 0.0 && (1.0..=FLOWS_MAX).contains(&v),
                "a whole number in [1, 65536]",
            )?,
            quantum: p.bytes(
                "quantum",
                QUANTUM_BYTES,
                |v| v.fract() == 0.0 && (QUANTUM_MIN..=QUANTUM_MAX).contains(&v),
                "a whole number of bytes in [256, 1048576]",
            )?,
            target: p.seconds("target", TARGET_S, |v| v > 0.0 && v <= 10.0, "in (0, 10] s")?,
            interval: p.seconds(
                "interval",
                INTERVAL_S,
                |v| v > 0.0 && v <= 100.0,
                "in (0, 100] s",
            )?,
            ecn: p.bool("ecn", true)?,
        };
        check_target(p, q.target, q.interval)?;
        Ok(q)
    }

    fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
        Box::new(FqCodel::new(self, link))
    }
}

/// Which list of active queues a sub-queue is on (§4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue: its credit, what it holds, its CoDel and its list.
#[derive(Debug, Clone, Copy)]
struct FlowQueue {
    deficit: i64,
    pkts: usize,
    bytes: u64,
    codel: CodelState,
    list: List,
}

#[derive(Debug)]
pub struct FqCodel {
    buffer: Buffer,
    quantum: i64,
    packet_size_bytes: f64,
    ecn: bool,
    queues: Vec<FlowQueue>,
    /// The active queues, each on at most one list: both are sized for every queue at build
    /// time, so moving a queue between them never allocates.
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
}

impl FqCodel {
    fn new(p: &FqCodelParams, link: LinkContext) -> Self {
        let n = p.flows as usize;
        let queue = FlowQueue {
            deficit: 0,
            pkts: 0,
            bytes: 0,
            codel: CodelState::new(p.target, p.interval),
            list: List::None,
        };
        FqCodel {
            buffer: link.buffer,
            quantum: p.quantum as i64,
            packet_size_bytes: link.packet_size_bytes,
            ecn: p.ecn,
            queues: vec![queue; n],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
        }
    }

    /// A packet's size in whole bytes (at least one), from its size in data packets.
    fn bytes(&self, size_pkts: f64) -> u64 {
        ((size_pkts * self.packet_size_bytes).round() as u64).max(1)
    }

    fn forget(&mut self, k: usize, size_pkts: f64) {
        let bytes = self.bytes(size_pkts);
        let q = &mut self.queues[k];
        debug_assert!(q.pkts > 0 && q.bytes >= bytes, "sub-queue {k} holds the packet");
        q.pkts -= 1;
        q.bytes -= bytes;
    }
}

/// SplitMix64's finalizer (Steele et al. 2014): a fixed, well-mixed 64-bit hash.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Discipline for FqCodel {
    fn buffer(&self) -> Buffer {
        self.buffer
    }

    fn queues(&self) -> usize {
        self.queues.len()
    }

    /// §4.1.1: the flow's bucket; its data and its ACKs are distinct flows.
    fn classify(&mut self, flow: u32, is_ack: bool, _ecn: Ecn) -> usize {
        let h = mix((flow as u64) << 1 | is_ack as u64) >> 32;
        // Linux's `reciprocal_scale`: the high bits scaled to [0, flows).
        ((h * self.queues.len() as u64) >> 32) as usize
    }

    /// §4.1.2: every arrival is queued (the port asks for an overflow victim after); a queue that
    /// was on no list becomes a new flow with a quantum of credit.
    fn enqueue(&mut self, _now_ps: u64, _backlog: usize, a: Arrival<'_>, _rng: &mut Rng) -> Verdict {
        let bytes = self.bytes(a.size_pkts);
        let q = &mut self.queues[a.sub];
        q.pkts += 1;
        q.bytes += bytes;
        if q.list == List::None {
            q.list = List::New;
            q.deficit = self.quantum;
            self.new_flows.push_back(a.sub as u32);
        }
        Verdict::Queued
    }

    /// §4.1.3: the queue holding the most bytes, the lowest-numbered of equals (Linux's scan
    /// of every bucket with a strict `>`). Only the active queues can hold bytes (a queue with
    /// packets is on a list until it empties): when they are few, only they are scanned, so the
    /// cost follows the flows with packets waiting; when most buckets are active, the buckets
    /// in order are cheaper to walk than the lists' scattered indices.
    fn overflow_victim(&mut self) -> usize {
        let active = self.new_flows.len() + self.old_flows.len();
        let mut victim = (0u64, usize::MAX);
        if 4 * active < self.queues.len() {
            for &k in self.new_flows.iter().chain(self.old_flows.iter()) {
                let (k, bytes) = (k as usize, self.queues[k as usize].bytes);
                if bytes > victim.0 || (bytes == victim.0 && k < victim.1) {
                    victim = (bytes, k);
                }
            }
        } else {
            for (k, q) in self.queues.iter().enumerate() {
                if q.bytes > victim.0 {
                    victim = (q.bytes, k);
                }
            }
        }
        debug_assert!(victim.0 > 0, "an overflow leaves a packet queued");
        victim.1
    }

    fn pushed_out(&mut self, sub: usize, size_pkts: f64) {
        self.forget(sub, size_pkts);
    }

    /// §4.2–4.3: the deficit round robin over the new, then the old, list.
    fn next_queue(&mut self, _now_ps: u64, head_enqueued_ps: &dyn Fn(usize) -> Option<u64>) -> usize {
        loop {
            let (k, new) = match self.new_flows.front() {
                Some(&k) => (k, true),
                None => (
                    *self
                        .old_flows
                        .front()
                        .expect("a packet waits, so a queue is active"),
                    false,
                ),
            };
            let q = &mut self.queues[k as usize];
            let list = if new { &mut self.new_flows } else { &mut self.old_flows };
            if q.deficit <= 0 {
                q.deficit += self.quantum;
                q.list = List::Old;
                list.pop_front();
                self.old_flows.push_back(k);
                continue;
            }
            if q.pkts == 0 {
                q.codel.empty();
                list.pop_front();
                if new {
                    q.list = List::Old;
                    self.old_flows.push_back(k);
                } else {
                    q.list = List::None;
                }
                continue;
            }
            debug_assert!(head_enqueued_ps(k as usize).is_some(), "queue {k} is counted non-empty");
            return k as usize;
        }
    }

    /// CoDel on the departing packet of its queue; what leaves is charged to the queue's credit.
    fn dequeue(&mut self, now_ps: u64, _backlog: usize, d: &Departure, _rng: &mut Rng) -> Verdict {
        self.forget(d.sub, d.size_pkts);
        let bytes = self.bytes(d.size_pkts) as i64;
        let q = &mut self.queues[d.sub];
        let verdict = if q.codel.should_signal(now_ps, d.sojourn_ps, q.pkts) {
            signal(self.ecn, d.ecn)
        } else {
            Verdict::Queued
        };
        if !matches!(verdict, Verdict::Dropped(_)) {
            q.deficit -= bytes;
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::DropReason;
    use serde_json::{json, Value};
    use std::collections::BTreeMap;

    const ACK: f64 = 40.0 / 1500.0;

    fn params(pairs: &[(&str, Value)]) -> Result<crate::queue::Queue> {
        let map: BTreeMap<String, Value> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        crate::queue::read("fq_codel", &map, "links[0].queue", Site::UNKNOWN)
    }

    /// A port in miniature: the discipline's sub-queues as FIFOs of (flow, size, enqueue time),
    /// served one packet per `pop`; the flows of the packets CoDel dropped in `dropped`.
    struct Port {
        fq: FqCodel,
        subs: Vec<VecDeque<(u32, f64, u64)>>,
        dropped: Vec<u32>,
        rng: Rng,
    }

    impl Port {
        fn new(target_s: f64, interval_s: f64, buffer_pkts: f64) -> Port {
            let p = FqCodelParams {
                flows: FLOWS,
                quantum: QUANTUM_BYTES,
                target: target_s,
                interval: interval_s,
                ecn: true,
            };
            let link = LinkContext {
                buffer: Buffer::new(buffer_pkts),
                capacity_pps: 1000.0,
                packet_time_ps: 1_000_000_000,
                packet_size_bytes: 1500.0,
                first_interval_s: 0.1,
            };
            let fq = FqCodel::new(&p, link);
            let n = fq.queues();
            Port {
                fq,
                subs: vec![VecDeque::new(); n],
                dropped: Vec::new(),
                rng: Rng::new(1, 0),
            }
        }

        /// No CoDel drops: every sojourn is below a 10 s target.
        fn fifo(buffer_pkts: f64) -> Port {
            Port::new(10.0, 100.0, buffer_pkts)
        }

        /// A packet of `flow` arrives; returns the flow whose head was pushed out, if any.
        fn push(&mut self, now: u64, flow: u32, size: f64) -> Option<u32> {
            let is_ack = size < 1.0;
            let sub = self.fq.classify(flow, is_ack, Ecn::NotEct);
            let mut a = Arrival::ack(flow, size);
            a.sub = sub;
            let held: usize = self.subs.iter().map(|s| s.len()).sum();
            assert_eq!(self.fq.enqueue(now, held, a, &mut self.rng), Verdict::Queued);
            self.subs[sub].push_back((flow, size, now));
            if held + 1 > self.fq.buffer().slots {
                let k = self.fq.overflow_victim();
                let (f, s, _) = self.subs[k].pop_front().expect("the victim holds packets");
                self.fq.pushed_out(k, s);
                return Some(f);
            }
            None
        }

        /// The next packet sent: its flow and size.
        fn pop(&mut self, now: u64) -> Option<(u32, f64)> {
            loop {
                if self.subs.iter().all(|s| s.is_empty()) {
                    return None;
                }
                let subs = &self.subs;
                let k = self.fq.next_queue(now, &|k| subs[k].front().map(|w| w.2));
                let (flow, size, at) = self.subs[k].pop_front().expect("non-empty");
                let d = Departure {
                    flow,
                    sub: k,
                    ecn: Ecn::NotEct,
                    size_pkts: size,
                    is_ack: size < 1.0,
                    sojourn_ps: now - at,
                };
                let held = self.subs.iter().map(|s| s.len()).sum();
                match self.fq.dequeue(now, held, &d, &mut self.rng) {
                    Verdict::Dropped(reason) => {
                        assert_eq!(reason, DropReason::Early);
                        self.dropped.push(flow);
                    }
                    _ => return Some((flow, size)),
                }
            }
        }

        /// Packets and bytes held in the queue of `flow`'s data or ACKs.
        fn held(&mut self, flow: u32, is_ack: bool) -> (usize, u64) {
            let k = self.fq.classify(flow, is_ack, Ecn::NotEct);
            (self.fq.queues[k].pkts, self.fq.queues[k].bytes)
        }
    }

    #[test]
    fn defaults_are_rfc_8290_and_linux_and_errors_name_the_field() {
        let q = params(&[]).unwrap();
        let values: BTreeMap<String, Value> = q.values().into_iter().collect();
        assert_eq!(values["flows"], json!(1024.0));
        assert_eq!(values["quantum"], json!(1514.0));
        assert_eq!(values["target"], json!(0.005));
        assert_eq!(values["interval"], json!(0.1));
        assert_eq!(values["ecn"], json!(true));
        for (field, bad) in [
            ("flows", json!(0)),
            ("flows", json!(100.5)),
            ("flows", json!(70000)),
            ("quantum", json!(100)),
            ("target", json!("0ms")),
            ("interval", json!(-1)),
            ("ecn", json!(1)),
        ] {
            let e = params(&[(field, bad.clone())]).unwrap_err().to_string();
            assert!(e.contains(&format!("links[0].queue.{field}")), "{field}={bad}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let e = params(&[("target", json!("200ms"))]).unwrap_err().to_string();
        assert!(e.contains("links[0].queue.target"), "{e}");
        // A size with its unit, as elsewhere in a scenario (refused as "must be a number" before).
        let q = params(&[("quantum", json!("1514B"))]).unwrap();
        let values: BTreeMap<String, Value> = q.values().into_iter().collect();
        assert_eq!(values["quantum"], json!(1514.0));
        assert!(params(&[("quantum", json!("9KB"))]).is_ok());
        assert!(params(&[("quantum", json!("1514 parsecs"))]).is_err());
    }

    #[test]
    fn classification_is_deterministic_and_spreads_flows() {
        let mut a = Port::fifo(1000.0);
        let mut b = Port::fifo(1000.0);
        let mut buckets = std::collections::BTreeSet::new();
        for f in 0..100 {
            let k = a.fq.classify(f, false, Ecn::NotEct);
            assert_eq!(k, b.fq.classify(f, false, Ecn::Ect0));
            assert!(k < 1024);
            buckets.insert(k);
            assert_ne!(k, a.fq.classify(f, true, Ecn::NotEct), "flow {f}: data and ACKs apart");
        }
        // 100 keys in 1024 buckets: about 4.6 collisions expected.
        assert!(buckets.len() >= 90, "{} buckets", buckets.len());
    }

    #[test]
    fn a_new_flow_is_served_before_old_ones() {
        let mut p = Port::fifo(1000.0);
        for _ in 0..10 {
            p.push(0, 1, 1.0);
            p.push(0, 2, 1.0);
        }
        // Both new: flow 1 sends its quantum (1514 B: two packets of 1500 B, the second taking
        // the deficit below zero), then flow 2 does.
        let order: Vec<u32> = (0..4).map(|_| p.pop(1).unwrap().0).collect();
        assert_eq!(order, [1, 1, 2, 2]);
        // Flow 3 arrives while 1 and 2 are backlogged: it goes first, for its whole quantum.
        p.push(2, 3, 1.0);
        p.push(2, 3, 1.0);
        p.push(2, 3, 1.0);
        assert_eq!(p.pop(3).unwrap().0, 3);
        assert_eq!(p.pop(3).unwrap().0, 3);
        // Then the old flows in turn, each with what its deficit allows (1514 − 1486 = 28 B of
        // credit: one packet), flow 3 behind them.
        let order: Vec<u32> = (0..4).map(|_| p.pop(4).unwrap().0).collect();
        assert_eq!(order, [1, 2, 3, 1]);
    }

    #[test]
    fn an_emptied_new_flow_goes_to_the_old_list_not_back_to_new() {
        let mut p = Port::fifo(1000.0);
        // Flow 1 sends small packets: 38 of 40 B exhaust a quantum; the 39th starts its second
        // quantum, on the old list.
        for _ in 0..200 {
            p.push(0, 1, ACK);
        }
        for _ in 0..39 {
            assert_eq!(p.pop(1).unwrap().0, 1);
        }
        p.push(2, 2, ACK); // a sparse flow: served at once
        assert_eq!(p.pop(3).unwrap().0, 2);
        // Flow 2 is found empty on the new list: it moves to the end of the old list, behind
        // flow 1. Its next packet does not make it new again: it waits for flow 1's quantum.
        assert_eq!(p.pop(4).unwrap().0, 1);
        p.push(5, 2, ACK);
        let mut before = 0;
        while p.pop(6).unwrap().0 == 1 {
            before += 1;
        }
        assert!(before >= 30, "flow 2 waited {before} packets of flow 1");
        // Found empty on the old list, it leaves the lists; its next packet is new again.
        assert_eq!(p.pop(7).unwrap().0, 1);
        p.push(8, 2, ACK);
        assert_eq!(p.pop(9).unwrap().0, 2);
    }

    #[test]
    fn full_packets_and_small_ones_share_the_link_in_bytes() {
        let mut p = Port::fifo(100_000.0);
        for _ in 0..2000 {
            p.push(0, 1, 1.0);
        }
        for _ in 0..40_000 {
            p.push(0, 7, ACK);
        }
        let mut bytes = [0.0f64; 2];
        let mut pkts = [0u32; 2];
        for _ in 0..20_000 {
            let (flow, size) = p.pop(1).unwrap();
            let i = (flow == 7) as usize;
            bytes[i] += size * 1500.0;
            pkts[i] += 1;
        }
        // Each round gives each queue 1514 B of credit: equal bytes within a quantum and a
        // packet, and about 38 ACKs of 40 B per data packet.
        assert!((bytes[0] - bytes[1]).abs() <= 1514.0 + 1500.0, "{bytes:?} {pkts:?}");
        assert!(pkts[1] > 35 * pkts[0], "{pkts:?}");
    }

    #[test]
    fn overflow_drops_the_head_of_the_queue_with_the_most_bytes() {
        // 60 slots: flow 1 holds 3 full packets (4500 B), flow 2 (ACKs of 40 B) holds 57: the
        // fattest in bytes is flow 1, not the longest.
        let mut p = Port::fifo(60.0);
        for _ in 0..3 {
            assert_eq!(p.push(0, 1, 1.0), None);
        }
        for _ in 0..57 {
            assert_eq!(p.push(0, 2, ACK), None);
        }
        assert_eq!(p.push(0, 2, ACK), Some(1)); // 4500 B vs 2320 B
        assert_eq!(p.push(0, 2, ACK), Some(1)); // 3000 B vs 2360 B
        assert_eq!(p.push(0, 2, ACK), Some(2)); // 1500 B vs 2400 B
        assert_eq!(p.held(1, false), (1, 1500));
        assert_eq!(p.held(2, true), (59, 2360));
        // What was pushed out is forgotten: the queues drain to nothing.
        while p.pop(1).is_some() {}
        assert_eq!((p.held(1, false), p.held(2, true)), ((0, 0), (0, 0)));
    }

    #[test]
    fn codel_drops_from_the_standing_queue_only() {
        // Flow 1 keeps a standing queue; flow 2 sends one packet per millisecond, served at once.
        let mut p = Port::new(0.005, 0.1, 10_000.0);
        let ms = 1_000_000_000u64;
        for _ in 0..600 {
            p.push(0, 1, 1.0);
        }
        for t in 0..500 {
            p.push(t * ms, 2, 1.0);
            p.pop(t * ms);
            p.pop(t * ms);
        }
        // Flow 1's sojourn reaches 5 ms at 5 ms: CoDel drops at 105 ms, then 100/√count ms after
        // each scheduled drop: 205, 275.7, 333.4, 383.4, 428.1 and 468.9 ms (the next, at
        // 506.7 ms, is past the end).
        assert!(p.dropped.iter().all(|&f| f == 1), "{:?}", p.dropped);
        assert_eq!(p.dropped.len(), 7, "{:?}", p.dropped);
    }
}
