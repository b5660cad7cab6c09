//! The packet engine allocates nothing per packet once its rings have grown (docs/packet.md):
//! counted with a global allocator of this test binary's own, on a network with flows entering
//! and leaving mid-path both ways, reverse ports for the ACKs, RED and random loss, and an optical
//! burst assembler with burst loss (its queues reuse their storage).

mod common;

use common::packet_engine;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts allocations and reallocations (frees are not the concern).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The counter is global: the tests of this binary take turns, so that one's allocations are
/// not counted as another's.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Events processed and allocations made from 20 s (past slow start) to 60 s of simulated time.
fn count_from_20_to_60_s(e: &mut lossync_core::packet::PacketEngine) -> (u64, u64) {
    e.advance(20.0);
    let (events, allocations) = (e.events_processed(), ALLOCATIONS.load(Ordering::Relaxed));
    e.advance(60.0);
    let events = e.events_processed() - events;
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    println!("{allocations} allocations in {events} events");
    (events, allocations)
}

#[test]
fn a_network_in_steady_state_allocates_nothing_per_packet() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = packet_engine(
        r#"
engine = "packet"
[[links]]
name = "a"
capacity = "100Mbps"
buffer = { packets = 100 }
delay = "5ms"
reverse = true
[[links]]
name = "b"
capacity = "100Mbps"
buffer = { packets = 100 }
delay = "5ms"
queue = { discipline = "red", min_th = 20, max_th = 80 }
loss_rate = 0.0001
reverse = { capacity = "100Mbps", buffer = { packets = 100 }, queue = { discipline = "droptail" } }
[[links]]
name = "c"
capacity = "100Mbps"
buffer = { packets = 100 }
delay = "5ms"
reverse = true
assembler = { timer = "2ms", policy = "random", queues = 2 }
burst_loss = 0.002
[[flows]]
cc = "cubic"
rtt = "60ms"
path = ["a", "b", "c"]
slow_start = true
[[flows]]
count = 2
cc = "reno"
rtt = "40ms..50ms"
path = ["b"]
slow_start = true
[[flows]]
cc = "htcp"
rtt = "50ms"
path = ["a", "b", "c"]
direction = "reverse"
delayed_ack = true
[run]
duration = "60s"
"#,
    );
    let (events, allocations) = count_from_20_to_60_s(&mut e);
    // A few for rings that still grow to a new largest window and the drop log's doublings.
    assert!(events > 2_000_000, "{events}");
    assert!(
        allocations < 100,
        "{allocations} allocations for {events} events"
    );
}

/// Dynamic traffic (flows arriving, finishing and freeing their slots) allocates per flow only
/// its congestion-control law (a `Box`, one allocation for Reno), not per packet: at most two
/// per arrival over a 40 s stretch at 50 flows/s (2,000 arrivals expected; 2,300 is 6.7 Poisson
/// standard deviations above), plus a few for rings that still grow.
#[test]
fn dynamic_traffic_allocates_per_flow_not_per_packet() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = packet_engine(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 100 }
[[flows]]
cc = "reno"
rtt = "20ms"
access_capacity = "20Mbps"
arrivals = { rate = 50, shape = 1.5, mean_size = "200KB", max_active = 200 }
[run]
duration = "60s"
"#,
    );
    let (events, allocations) = count_from_20_to_60_s(&mut e);
    assert!(events > 500_000, "{events}");
    assert!(
        allocations < 2 * 2_300 + 100,
        "{allocations} allocations for {events} events"
    );
}

/// Flow queuing (FQ-CoDel: 1024 sub-queues, two lists of active queues, a CoDel per queue)
/// allocates nothing per packet either: its lists are sized for every queue when it is built,
/// and the port's sub-queue rings stop growing once each flow has had its largest backlog.
#[test]
fn flow_queuing_allocates_nothing_per_packet() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut e = packet_engine(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { bdp_fraction = 1.0 }
queue = { discipline = "fq_codel" }
[[flows]]
count = 10
cc = "reno"
rtt = "10ms..200ms"
slow_start = true
[run]
duration = "60s"
"#,
    );
    let (events, allocations) = count_from_20_to_60_s(&mut e);
    assert!(events > 500_000, "{events}");
    assert!(
        allocations < 100,
        "{allocations} allocations for {events} events"
    );
}
