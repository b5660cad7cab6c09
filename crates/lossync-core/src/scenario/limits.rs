//! The range of every number a scenario may give, each with its reason. A number outside its range
//! is refused when the scenario is resolved, naming its field: a run never starts from a value no
//! network has (a window of 10^300 packets, a 1 ps round trip), which would end in infinities,
//! NaN metrics or an allocation the machine cannot make. The ranges are listed in
//! docs/scenario.md ("Ranges"); a law's own parameters are bounded where the law reads them
//! (`cc/`), with [`crate::cc::MAX_WINDOW_PKTS`] for those counted in packets.

/// Rates (`capacity`, `access_capacity`, a reverse direction's `capacity`), bits per second: at
/// most 1 Pb/s, over 600 times the fastest standard Ethernet (1.6 Tb/s, IEEE 802.3dj); at least
/// 1 b/s.
pub const RATE_BPS: (f64, f64) = (1.0, 1e15);

/// Packet sizes (`packet_size`, `ack_size`), bytes: at least an IPv4 and a TCP header, 20 bytes
/// each (RFC 791, RFC 9293); at most 65,535, the largest IPv4 datagram (its total length is a
/// 16-bit field, RFC 791 §3.1) and the largest TCP segment an MSS option can announce.
pub const PACKET_BYTES: (f64, f64) = (40.0, 65_535.0);

/// Windows (`rwnd`, `initial_window`), bytes: at most TCP's largest window
/// ([`crate::cc::MAX_WINDOW_BYTES`], RFC 7323 §2.2–2.3).
pub const MAX_WINDOW_BYTES: f64 = crate::cc::MAX_WINDOW_BYTES;

/// Base RTTs (`rtt`, `reference_rtt`), seconds: at least 1 µs (a host's loopback takes a few µs,
/// a data centre's round trips 5–100 µs); at most 60 s, the upper bound on TCP's retransmission
/// timeout (RFC 6298 §2.5; the packet engine's `RTO_MAX`), beyond which every packet would time
/// out before its ACK could return.
pub const RTT_S: (f64, f64) = (1e-6, 60.0);

/// Run length (`duration`; also bounds `start` and `holdoff`), seconds: at most 10^7 s (116
/// days). The packet engine's clock counts picoseconds in 64 bits, 2^64 ps ≈ 1.8·10^7 s.
pub const MAX_DURATION_S: f64 = 1e7;

/// The fluid engine's step: at least 80 steps per base RTT (docs/model.md §1.4). Without
/// `run.step` the step is [`DEFAULT_STEP_S`], or the shortest base RTT over this if that is
/// shorter; a given step longer than that is refused.
pub const STEPS_PER_RTT: f64 = 80.0;

/// Fluid steps per burst-assembly timer: the fluid form of an assembler (docs/fluid.md,
/// "Optical burst switching") places a timer's expiry within a step, so a timer needs a few.
pub const STEPS_PER_TIMER: f64 = 4.0;

/// The default step, 1 ms: 80 steps per RTT for the paper's 80–260 ms flows.
pub const DEFAULT_STEP_S: f64 = 1e-3;

/// The shortest step, 1 ns: below it a step resolves nothing a network does (a 40-byte packet
/// takes 0.32 ns at the fastest rate allowed), and a run of [`MAX_DURATION_S`] stays within
/// 10^16 steps.
pub const MIN_STEP_S: f64 = 1e-9;

/// Buffers, bytes: at most 2^64, a 64-bit count of bytes (far beyond any router's memory; the
/// engines refuse what the machine's memory cannot hold before that).
pub const MAX_BUFFER_BYTES: f64 = 18_446_744_073_709_551_616.0;

/// The buffer a calibration was fitted at (`loss.fitted_buffer_pkts`, a calibration file's
/// `[fitted] smallest_buffer_pkts`): at least a packet, as every buffer, and at most 10^12
/// packets (1.5 PB of 1500-byte packets), so the warning that compares it stays a number.
pub const FITTED_BUFFER_PKTS: (f64, f64) = (1.0, 1e12);
/// `bdp_fraction`: at most 1000 bandwidth-delay products (buffers measured in access networks
/// hold up to seconds of traffic, tens of BDPs at common RTTs; Gettys & Nichols, "Bufferbloat:
/// dark buffers in the Internet", CACM 55(1), 2012).
pub const MAX_BDP_FRACTION: f64 = 1000.0;

/// Delayed-ACK timeout, seconds: at most 0.5 s (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
pub const MAX_DELACK_TIMEOUT_S: f64 = 0.5;

/// Pacing ratios: at most 10, Linux's bound on `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`
/// (0..1000 percent, net/ipv4/sysctl_net_ipv4.c).
pub const MAX_PACING_RATIO: f64 = 10.0;

/// XCP's gains α and β: at most 1. α is the fraction of the spare bandwidth and β the fraction
/// of the persistent queue the router hands out per control interval (Katabi et al. 2002 §3.5);
/// above 1 it would ask for more than there is. (Stability needs α < π/(4√2) ≈ 0.55 and
/// β = α²√2; values between are allowed, to study instability.)
pub const MAX_XCP_GAIN: f64 = 1.0;

/// Files a scenario names (an m_k distribution, a calibration), bytes: at most 64 MiB, far above
/// any such file (a distribution has one line per m, a calibration a dozen) and far below what
/// exhausts memory; the Python front end reads scenario and sweep files with the same cap.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// A file the scenario names in `field`, as UTF-8 text: a regular file of at most
/// [`MAX_INPUT_BYTES`]; anything else (a device such as /dev/zero, a pipe, a folder, a huge file)
/// is refused naming the field and the file before any of it is read.
pub fn read_input_file(field: &str, path: &std::path::Path) -> crate::error::Result<String> {
    use crate::error::Error;
    use std::io::Read;
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = |reason: String| Error::Io {
        field: field.to_string(),
        path: path.display().to_string(),
        reason,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // O_NONBLOCK: opening a pipe with no writer would otherwise wait for one forever.
    #[cfg(unix)]
    options.custom_flags(libc_o_nonblock());
    let file = options.open(path).map_err(|e| Error::io(field, path, &e))?;
    let meta = file.metadata().map_err(|e| Error::io(field, path, &e))?;
    if meta.is_dir() {
        return Err(refuse("is a directory, not a file".into()));
    }
    if !meta.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(refuse(format!(
            "{} bytes, more than the {} MiB such a file may have",
            meta.len(),
            MAX_INPUT_BYTES >> 20
        )));
    }
    let mut text = String::new();
    (file.take(MAX_INPUT_BYTES + 1))
        .read_to_string(&mut text)
        .map_err(|e| Error::io(field, path, &e))?;
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(refuse(format!(
            "more than the {} MiB such a file may have",
            MAX_INPUT_BYTES >> 20
        )));
    }
    Ok(text)
}

/// O_NONBLOCK without a libc dependency: 0o4000 on Linux (asm-generic/fcntl.h) and 0x4 on the
/// BSDs and macOS (sys/fcntl.h).
#[cfg(unix)]
fn libc_o_nonblock() -> i32 {
    if cfg!(target_os = "linux") || cfg!(target_os = "android") {
        0o4000
    } else {
        0x4
    }
}

/// The most threads one run may ask for (`run.threads`): beyond the largest machines' core
/// counts, and a bound on the threads a typo could start.
pub const MAX_THREADS: i64 = 1024;

/// Connections in one scenario (`count` × `parallel`, over every group): 10^6, the largest flow
/// count of the buffer-sizing literature (Appenzeller et al., SIGCOMM 2004, size a core router's
/// buffer for 10^4–10^6 flows). Each connection's resolved description takes a few hundred bytes
/// before any engine's memory check runs.
pub const MAX_FLOWS: usize = 1_000_000;
