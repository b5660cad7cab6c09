//! The network the packet engine runs: its elements (access links, pipes, ports, other nodes) and
//! every flow's routes through them. [`build`] makes them from the scenario's links and paths, any
//! graph of links (the dumbbell is its one-link case); a topology of other parts, such as
//! [`Node`]s, is the caller's to build ([`super::PacketEngine::with_topology`]).

use super::access::Access;
use super::assembler::Assembler;
use super::event::{ps_from_s, s_from_ps, Serializer, SimTime};
use super::node::Node;
use super::pipe::Pipe;
use super::port::Port;
use super::route::{Hop, Route};
use crate::error::{Error, Result};
use crate::queue::Buffer;
use crate::rng::Rng;
use crate::scenario::{Flow, Scenario};

/// Access links run this many times faster than the bottleneck unless a flow group sets
/// `access_capacity`.
pub const ACCESS_SPEEDUP: f64 = 10.0;
/// Rings are pre-sized to the expected window, but not beyond this (they grow if needed).
pub const RING_PRESIZE_LIMIT: usize = 1 << 16;

/// Elements by kind, and one [`Route`] per flow (connection) of the scenario, in order. Ports
/// are the scenario's links, in order (their statistics are the links' statistics).
pub struct Topology {
    pub access: Vec<Access>,
    pub pipes: Vec<Pipe>,
    pub ports: Vec<Port>,
    pub nodes: Vec<Box<dyn Node>>,
    pub routes: Vec<Route>,
}

impl Topology {
    /// Adds a node; returns the hop that names it in routes.
    pub fn add_node(&mut self, node: Box<dyn Node>) -> Hop {
        self.nodes.push(node);
        Hop::Node((self.nodes.len() - 1) as u32)
    }

    /// Checks every route against the elements (see [`Route::check`]) and that there is one per
    /// flow of `sc`, with one port per link.
    pub fn check(&self, sc: &Scenario) -> Result<()> {
        if self.routes.len() != sc.flows.len() || self.ports.len() != sc.links.len() {
            return Err(Error::field(
                "topology",
                format!(
                    "{} routes and {} ports for {} flows and {} links",
                    self.routes.len(),
                    self.ports.len(),
                    sc.flows.len(),
                    sc.links.len()
                ),
            ));
        }
        let has = |h: Hop| match h {
            Hop::Sender | Hop::Receiver => true,
            Hop::Access(i) => (i as usize) < self.access.len(),
            Hop::Pipe(i) => (i as usize) < self.pipes.len(),
            Hop::Queue { port, class } => self
                .ports
                .get(port as usize)
                .is_some_and(|p| (class as usize) < p.classes()),
            Hop::Node(i) => (i as usize) < self.nodes.len(),
        };
        for (f, r) in self.routes.iter().enumerate() {
            r.check(&format!("routes[{f}]"), &has)?;
        }
        Ok(())
    }
}

/// Pre-sized ring capacity for a flow's pipes, sender and receiver: about its fair share of the
/// pipe at the slowest link of its path (rings grow if a flow takes more).
pub fn ring_hint(sc: &Scenario, f: &Flow) -> usize {
    let dl = f
        .path
        .iter()
        .map(|&l| &sc.links[l])
        .reduce(|a, b| {
            if b.capacity_pps < a.capacity_pps {
                b
            } else {
                a
            }
        })
        .expect("a path names at least one link");
    let buffer_slots = Buffer::new(dl.buffer_pkts).slots;
    let share = 2.0 * (dl.capacity_pps * f.rtt_s + buffer_slots as f64) / sc.flows.len() as f64
        + f.initial_window_pkts;
    (share.min(f.rwnd_pkts) as usize).clamp(64, RING_PRESIZE_LIMIT)
}

/// The network of the scenario's links and paths, per flow `i` with base RTT `T_i` (the
/// scenario's `rtt_s`), data path `l_1 … l_k` and ACK path `r_1 … r_m` (the reverse directions
/// of the path's links that are modelled, in the order the ACKs cross them; often none):
///
/// ```text
/// data: Sender ─ Access ─ Pipe(P/2) ─ Queue(l_1) ─ Pipe(d_1) ─ Queue(l_2) ─ … ─ Queue(l_k) ─ Receiver
/// ACK:  Receiver ─ Queue(r_1) ─ Pipe(d(r_1)) ─ … ─ Queue(r_m) ─ Pipe(P − P/2) ─ Sender
/// ```
///
/// Each link is a port (its queue, one per link, in order) and a pipe (its `delay`, shared by
/// every packet that goes on from that port to another port: a router-to-router hop, as in
/// htsim). A flow's own two pipes carry the rest of its RTT. The budget:
///
/// `T_i` = one access serialization + one data serialization per port of the path + one ACK
/// serialization per port of the ACK path + the delays `d` of the links between two ports the
/// flow crosses in a row (both ways) + `P`, the flow's remaining propagation, split in halves:
/// before its first port, and after its ACKs' last port (the whole way back when ACKs are a pure
/// delay). The receiver sits right behind the last port. The last link's delay, the hosts' edges
/// and every unmodelled reverse hop are inside `P`: the base RTT is exactly `T_i` whatever the
/// path, as the fluid engine takes it.
///
/// On one link (the dumbbell) there is no router-to-router hop: `P` is `T_i` less the
/// serializations, and the bandwidth-delay product of the closed forms is exactly `C·T_i`.
/// A link with an `assembler` has a burst assembler node ([`Assembler`], one per link, shared by
/// its flows) right before its port on every data route that crosses it: `… ─ Node ─ Queue(l) ─ …`.
/// Its burstification delay is not in the budget: it adds to the RTT, as in an OBS network.
///
/// The access link runs at the flow group's `access_capacity`, or [`ACCESS_SPEEDUP`] times its
/// first link; the connections of a parallel flow share one (they come from one host). A flow
/// with `direction = "reverse"` sends through the reverse directions' ports and its ACKs queue
/// in the forward ones (the scenario's paths say so already).
pub fn build(sc: &Scenario) -> Result<Topology> {
    let n = sc.flows.len();
    let mut ports: Vec<Port> = sc
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Port::new(
                i,
                l,
                l.buffer_pkts,
                // XCP's first control interval: the mean base RTT of the link's flows (rounded
                // as the engine's clock is).
                s_from_ps(ps_from_s(sc.mean_base_rtt_s(i))),
                sc.run.seed,
                RING_PRESIZE_LIMIT << 4,
            )
        })
        .collect();
    let link_delay_ps: Vec<SimTime> = sc.links.iter().map(|l| ps_from_s(l.delay_s)).collect();
    // Per link with a burst assembler, its node, at the ingress of the link's port.
    let mut nodes: Vec<Box<dyn Node>> = Vec::new();
    let link_node: Vec<Option<u32>> = (sc.links.iter().enumerate())
        .map(|(i, l)| {
            l.assembler.as_ref()?;
            nodes.push(Box::new(Assembler::new(i, l, n, sc.run.seed)));
            Some((nodes.len() - 1) as u32)
        })
        .collect();

    let bits = 8.0 * sc.links[0].packet_size_bytes;
    let mut access: Vec<Access> = Vec::new();
    let mut pipes = Vec::with_capacity(2 * n);
    // Per link, its pipe once a route goes from its port to another port.
    let mut link_pipe: Vec<Option<u32>> = vec![None; sc.links.len()];
    let mut routes = Vec::with_capacity(n);
    for f in &sc.flows {
        let field = format!("flows[{}]", f.group);
        let first = &sc.links[f.path[0]];
        let access_bps = f
            .access_capacity_bps
            .unwrap_or(ACCESS_SPEEDUP * first.capacity_bps);
        // Stream 5000 + host: each host's jitter draws from its own stream.
        let host = Access::new(
            Serializer::new(bits, access_bps),
            ps_from_s(f.send_jitter_s),
            Rng::new(sc.run.seed, 5000 + f.logical as u64),
        );
        let host_ps = host.nominal_ps();
        if f.logical == access.len() {
            access.push(host);
        }
        let ack_services: Vec<Serializer> = f
            .ack_path
            .iter()
            .map(|&p| Serializer::new(8.0 * f.ack_size_bytes, sc.links[p].capacity_bps))
            .collect();
        let serialization_ps: SimTime = host_ps
            + f.path.iter().map(|&p| ports[p].service_ps).sum::<SimTime>()
            + ack_services.iter().map(|s| s.nominal_ps()).sum::<SimTime>();
        // The links between two ports in a row: all but the last of each path.
        let hops_ps: SimTime = [&f.path, &f.ack_path]
            .iter()
            .flat_map(|p| &p[..p.len().saturating_sub(1)])
            .map(|&l| link_delay_ps[l])
            .sum();
        let rtt_ps = ps_from_s(f.rtt_s);
        if rtt_ps < serialization_ps + hops_ps {
            return Err(Error::field(
                format!("{field}.rtt"),
                format!(
                    "an RTT of {} s is shorter than serializing one packet on the access link \
                     and each link of the path ({} s) plus the delays of the links between \
                     them ({} s)",
                    f.rtt_s,
                    s_from_ps(serialization_ps),
                    s_from_ps(hops_ps)
                ),
            ));
        }
        let prop_ps = rtt_ps - serialization_ps - hops_ps;
        let hint = ring_hint(sc, f);
        let fwd = pipes.len() as u32;
        pipes.push(Pipe::new(prop_ps / 2, hint));
        let rev = pipes.len() as u32;
        pipes.push(Pipe::new(prop_ps - prop_ps / 2, hint));

        // From one port to the next: the first one's pipe, unless its delay is zero.
        let mut hop = |l: usize, pipes: &mut Vec<Pipe>| -> Option<Hop> {
            if link_delay_ps[l] == 0 {
                return None;
            }
            let p = *link_pipe[l].get_or_insert_with(|| {
                let in_flight = sc.links[l].capacity_pps * sc.links[l].delay_s;
                let hint = (in_flight as usize).clamp(64, RING_PRESIZE_LIMIT);
                pipes.push(Pipe::new(link_delay_ps[l], hint));
                (pipes.len() - 1) as u32
            });
            Some(Hop::Pipe(p))
        };
        let mut data = vec![Hop::Sender, Hop::Access(f.logical as u32), Hop::Pipe(fwd)];
        for (j, &l) in f.path.iter().enumerate() {
            if j > 0 {
                data.extend(hop(f.path[j - 1], &mut pipes));
            }
            data.extend(link_node[l].map(Hop::Node));
            data.push(Hop::Queue {
                port: l as u32,
                class: 0,
            });
        }
        data.push(Hop::Receiver);
        let mut ack = vec![Hop::Receiver];
        for (j, (&l, &service)) in f.ack_path.iter().zip(&ack_services).enumerate() {
            if j > 0 {
                ack.extend(hop(f.ack_path[j - 1], &mut pipes));
            }
            // The flow's ACKs keep their own serialization carry on the port (their own size).
            let class = ports[l].add_class(service);
            ack.push(Hop::Queue {
                port: l as u32,
                class,
            });
        }
        ack.extend([Hop::Pipe(rev), Hop::Sender]);
        routes.push(Route { data, ack });
    }
    Ok(Topology {
        access,
        pipes,
        ports,
        nodes,
        routes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::from_toml;
    use std::path::Path;

    fn sc(text: &str) -> Scenario {
        from_toml(text, Path::new(".")).unwrap()
    }

    #[test]
    fn dumbbell_routes() {
        // Two forward connections of one parallel flow, one reverse flow: the forward flows'
        // ACKs queue on the reverse port (a class each), the reverse flow's on the forward port.
        let s = sc(r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 50 }
[[flows]]
cc = "reno"
rtt = "100ms"
parallel = 2
[[flows]]
cc = "reno"
rtt = "60ms"
direction = "reverse"
"#);
        let t = build(&s).unwrap();
        t.check(&s).unwrap();
        assert_eq!(t.access.len(), 2, "one access link per host");
        assert_eq!(t.pipes.len(), 6, "two pipes per connection");
        let q = |port, class| Hop::Queue { port, class };
        use Hop::*;
        assert_eq!(
            t.routes[0].data,
            [Sender, Access(0), Pipe(0), q(0, 0), Receiver]
        );
        assert_eq!(t.routes[0].ack, [Receiver, q(1, 1), Pipe(1), Sender]);
        assert_eq!(
            t.routes[1].data,
            [Sender, Access(0), Pipe(2), q(0, 0), Receiver]
        );
        assert_eq!(t.routes[1].ack, [Receiver, q(1, 2), Pipe(3), Sender]);
        assert_eq!(
            t.routes[2].data,
            [Sender, Access(1), Pipe(4), q(1, 0), Receiver]
        );
        assert_eq!(t.routes[2].ack, [Receiver, q(0, 1), Pipe(5), Sender]);
        // The base RTT: 100 ms = access (12 µs at 1 Gb/s) + bottleneck (120 µs) + ACK (3.2 µs)
        // + the two pipes.
        let d = t.pipes[0].delay_ps() + t.pipes[1].delay_ps();
        assert_eq!(
            d,
            100_000_000_000 - 12_000_000 - 120_000_000 - 3_200_000,
            "propagation"
        );
        assert_eq!(t.pipes[0].delay_ps(), d / 2);
    }

    #[test]
    fn a_parking_lot_with_reverse_directions() {
        // A long flow over a then b, a short one over b; both links modelled both ways. Data
        // go from a's port through a's pipe to b's; ACKs come back through b's reverse port,
        // its pipe, and a's reverse port. Each link's pipe is created once, for all flows.
        let s = sc(r#"
engine = "packet"
[[links]]
name = "a"
capacity = "100Mbps"
buffer = { packets = 50 }
delay = "10ms"
reverse = true
[[links]]
name = "b"
capacity = "50Mbps"
buffer = { packets = 50 }
delay = "5ms"
reverse = true
[[flows]]
cc = "reno"
rtt = "100ms"
path = ["a", "b"]
[[flows]]
cc = "reno"
rtt = "100ms"
path = ["b"]
[[flows]]
cc = "reno"
rtt = "100ms"
path = ["a", "b"]
"#);
        let t = build(&s).unwrap();
        t.check(&s).unwrap();
        let q = |port, class| Hop::Queue { port, class };
        use Hop::*;
        assert_eq!(
            t.routes[0].data,
            [
                Sender,
                Access(0),
                Pipe(0),
                q(0, 0),
                Pipe(2),
                q(1, 0),
                Receiver
            ]
        );
        assert_eq!(
            t.routes[0].ack,
            [Receiver, q(3, 1), Pipe(3), q(2, 1), Pipe(1), Sender]
        );
        assert_eq!(
            t.routes[1].data,
            [Sender, Access(1), Pipe(4), q(1, 0), Receiver]
        );
        assert_eq!(t.routes[1].ack, [Receiver, q(3, 2), Pipe(5), Sender]);
        assert_eq!(
            t.routes[2].data,
            [
                Sender,
                Access(2),
                Pipe(6),
                q(0, 0),
                Pipe(2),
                q(1, 0),
                Receiver
            ]
        );
        assert_eq!(
            t.routes[2].ack,
            [Receiver, q(3, 3), Pipe(3), q(2, 2), Pipe(7), Sender]
        );
        assert_eq!(t.pipes.len(), 8);
        assert_eq!(t.pipes[2].delay_ps(), 10_000_000_000, "a's delay");
        assert_eq!(
            t.pipes[3].delay_ps(),
            5_000_000_000,
            "b's delay, on its reverse"
        );
        // The base RTT: access 12 µs (1 Gb/s, 10 × a), data 120 µs on a and 240 µs on b, ACKs
        // 6.4 µs on b's reverse and 3.2 µs on a's, the two link pipes, the flow's own pipes.
        let own = t.pipes[0].delay_ps() + t.pipes[1].delay_ps();
        let serialization = 12_000_000 + 120_000_000 + 240_000_000 + 6_400_000 + 3_200_000;
        assert_eq!(own, 100_000_000_000 - serialization - 15_000_000_000);
        assert_eq!(t.pipes[0].delay_ps(), own / 2);
        // The short flow: no link between two of its ports.
        let own = t.pipes[4].delay_ps() + t.pipes[5].delay_ps();
        assert_eq!(own, 100_000_000_000 - 24_000_000 - 240_000_000 - 6_400_000);
    }

    #[test]
    fn a_link_without_delay_needs_no_pipe() {
        let s = sc(r#"
engine = "packet"
[[links]]
name = "a"
capacity = "100Mbps"
buffer = { packets = 50 }
[[links]]
name = "b"
capacity = "100Mbps"
buffer = { packets = 50 }
[[flows]]
cc = "reno"
rtt = "100ms"
path = ["a", "b"]
"#);
        let t = build(&s).unwrap();
        let q = |port| Hop::Queue { port, class: 0 };
        use Hop::*;
        assert_eq!(
            t.routes[0].data,
            [Sender, Access(0), Pipe(0), q(0), q(1), Receiver]
        );
        assert_eq!(t.pipes.len(), 2);
    }

    #[test]
    fn one_way_acks_are_a_pure_delay() {
        let s = sc(r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 50 }
[[flows]]
cc = "reno"
rtt = "100ms"
"#);
        let t = build(&s).unwrap();
        assert_eq!(t.routes[0].ack, [Hop::Receiver, Hop::Pipe(1), Hop::Sender]);
    }

    #[test]
    fn malformed_routes_are_refused() {
        let s = sc(r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 50 }
[[flows]]
cc = "reno"
rtt = "100ms"
"#);
        let base = build(&s).unwrap();
        let bad = |edit: &dyn Fn(&mut Route)| {
            let mut t = build(&s).unwrap();
            edit(&mut t.routes[0]);
            t.check(&s).unwrap_err().to_string()
        };
        base.check(&s).unwrap();
        assert!(bad(&|r| {
            r.data.remove(2);
        })
        .contains("access link must be"));
        assert!(bad(&|r| r.data[2] = Hop::Pipe(9)).contains("no element Pipe(9)"));
        assert!(bad(&|r| r.ack.reverse()).starts_with("routes[0].ack: must run from"));
        assert!(bad(&|r| r.data[3] = Hop::Queue { port: 0, class: 1 }).contains("no element"));
    }
}
