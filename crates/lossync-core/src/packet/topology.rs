//! The network the packet engine runs: its elements (access links, pipes, ports, other nodes) and
//! every flow's routes through them. [`dumbbell`] builds the one topology the scenarios describe
//! today; another topology is another builder of the same parts.

use super::access::Access;
use super::event::{ps_from_s, s_from_ps, Serializer, SimTime};
use super::node::Node;
use super::pipe::Pipe;
use super::port::Port;
use super::route::{Hop, Route};
use crate::error::{Error, Result};
use crate::queue::Buffer;
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

/// Refuses a scenario that is not a dumbbell: one link, or one link and its reverse direction.
pub fn check_dumbbell(sc: &Scenario) -> Result<()> {
    let two_way = sc.links.len() == 2 && sc.links[1].reverse_of == Some(0);
    if sc.links.len() != 1 && !two_way {
        return Err(Error::field(
            "links",
            "the packet engine supports one bottleneck link (a dumbbell, with its reverse \
             direction if asked for) in this version",
        ));
    }
    Ok(())
}

/// Pre-sized ring capacity for a flow's pipes, sender and receiver: about its fair share of the
/// pipe (rings grow if a flow takes more).
pub fn ring_hint(sc: &Scenario, f: &Flow) -> usize {
    let dl = &sc.links[f.path[0]];
    let buffer_slots = Buffer::new(dl.buffer_pkts).slots;
    let share = 2.0 * (dl.capacity_pps * f.rtt_s + buffer_slots as f64) / sc.flows.len() as f64
        + f.initial_window_pkts;
    (share.min(f.rwnd_pkts) as usize).clamp(64, RING_PRESIZE_LIMIT)
}

/// The dumbbell, per flow `i` with base RTT `T_i` (the scenario's `rtt_s`):
///
/// ```text
/// data: Sender ─ Access (10·C, no loss) ─ Pipe d_fwd ─ Queue (bottleneck, C, B slots) ─ Receiver
/// ACK:  Receiver ─ [Queue (reverse direction, C, B slots), if modelled] ─ Pipe d_rev ─ Sender
/// ```
///
/// The connections of a parallel flow share one access link (they come from one host); each
/// connection has its own two pipes. A flow with `direction = "reverse"` sends through the
/// reverse direction's port and its ACKs queue in the forward one. `T_i` covers everything an
/// empty network adds: one access serialization, one bottleneck serialization, one ACK
/// serialization on the reverse direction when it is modelled, and the propagation `d_fwd +
/// d_rev`, split in halves. The receiver sits right behind the bottleneck, so the
/// bandwidth-delay product of the closed forms is exactly `C·T_i`.
pub fn dumbbell(sc: &Scenario) -> Result<Topology> {
    check_dumbbell(sc)?;
    let n = sc.flows.len();
    let mean_rtt_s = sc.flows.iter().map(|f| f.rtt_s).sum::<f64>() / n as f64;
    // XCP's first control interval is the mean base RTT (rounded as the engine's clock is).
    let first_interval_s = s_from_ps(ps_from_s(mean_rtt_s));
    let mut ports: Vec<Port> = sc
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Port::new(
                i,
                l,
                l.buffer_pkts,
                first_interval_s,
                sc.run.seed,
                RING_PRESIZE_LIMIT << 4,
            )
        })
        .collect();

    let bits = 8.0 * sc.links[0].packet_size_bytes;
    let mut access: Vec<Access> = Vec::new();
    let mut pipes = Vec::with_capacity(2 * n);
    let mut routes = Vec::with_capacity(n);
    for f in &sc.flows {
        let field = format!("flows[{}]", f.group);
        let data_port = f.path[0];
        let ack_port = f.ack_path.first().copied();
        let dl = &sc.links[data_port];
        let access_bps = f
            .access_capacity_bps
            .unwrap_or(ACCESS_SPEEDUP * dl.capacity_bps);
        let host = Access::new(Serializer::new(bits, access_bps));
        if f.logical == access.len() {
            access.push(host);
        }
        let ack_service = Serializer::new(
            8.0 * f.ack_size_bytes,
            ack_port.map_or(dl.capacity_bps, |p| sc.links[p].capacity_bps),
        );
        let rtt_ps = ps_from_s(f.rtt_s);
        let serialization_ps: SimTime = host.nominal_ps()
            + ports[data_port].service_ps
            + ack_port.map_or(0, |_| ack_service.nominal_ps());
        if rtt_ps < serialization_ps {
            return Err(Error::field(
                format!("{field}.rtt"),
                format!(
                    "an RTT of {} s is shorter than serializing one packet on the access link \
                     and the bottleneck ({} s)",
                    f.rtt_s,
                    s_from_ps(serialization_ps)
                ),
            ));
        }
        let prop_ps = rtt_ps - serialization_ps;
        let hint = ring_hint(sc, f);
        let fwd = pipes.len() as u32;
        pipes.push(Pipe::new(prop_ps / 2, hint));
        let rev = pipes.len() as u32;
        pipes.push(Pipe::new(prop_ps - prop_ps / 2, hint));

        let data = vec![
            Hop::Sender,
            Hop::Access(f.logical as u32),
            Hop::Pipe(fwd),
            Hop::Queue {
                port: data_port as u32,
                class: 0,
            },
            Hop::Receiver,
        ];
        let mut ack = vec![Hop::Receiver];
        if let Some(p) = ack_port {
            // The flow's ACKs keep their own serialization carry on the port (their own size).
            let class = ports[p].add_class(ack_service);
            ack.push(Hop::Queue {
                port: p as u32,
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
        nodes: Vec::new(),
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
        let t = dumbbell(&s).unwrap();
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
        let t = dumbbell(&s).unwrap();
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
        let base = dumbbell(&s).unwrap();
        let bad = |edit: &dyn Fn(&mut Route)| {
            let mut t = dumbbell(&s).unwrap();
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
