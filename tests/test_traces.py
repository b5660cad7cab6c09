"""Packet traces (`--pcap LINK`, `lossync.run(pcap=...)`).

The trace is read two ways: by a parser of the libpcap format written here from its
specification (struct, no lossync code), and by tshark, Wireshark's reader, installed from the
Debian packages when missing. Both must find the engine's numbers in it: one record per packet
that crossed the link, the flows' sequence numbers in bytes, and each drop at the link as a
retransmission.
"""

import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import lossync

MSS = 1460  # 1500-byte packets less 20 bytes of IPv4 and 20 of TCP header

# Two Reno flows on a 2 Mb/s link with one BDP of buffer: about 1,000 packets in 6 s, a few dozen
# drops, every one recovered well before the end. A packet takes 6 ms on the wire, so any segment
# below the highest one seen came more than 3 ms after it: tshark calls it a retransmission, not
# "out of order" (its threshold without a handshake in the capture).
TWO_FLOWS = """
engine = "packet"
[dumbbell]
capacity = "2Mbps"
buffer = { bdp_fraction = 1.0 }
[[flows]]
count = 2
cc = "reno"
rtt = "50ms"
slow_start = true
[run]
duration = "6s"
warmup = "0s"
"""

# One flow whose ACKs cross the link's other direction, under RED marking CE.
ECN_TWO_WAY = """
engine = "packet"
[dumbbell]
capacity = "2Mbps"
buffer = { packets = 20 }
queue = { discipline = "red", ecn = true, min_th = 3, max_th = 15 }
reverse = true
[[flows]]
cc = "reno"
rtt = "50ms"
slow_start = true
ecn = true
[run]
duration = "6s"
warmup = "0s"
"""


def read_pcap(path: Path) -> tuple[tuple, list[dict]]:
    """The file header and every record, decoded from the format's specification
    (pcap-savefile(5); RFC 791 and RFC 9293 for the headers)."""
    data = path.read_bytes()
    header = struct.unpack("<IHHiIII", data[:24])
    records, off = [], 24
    while off < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[off:off + 16])
        p = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ihl = (p[0] & 15) * 4
        sport, dport, seq, ack, offset, flags = struct.unpack(">HHIIBB", p[ihl:ihl + 14])
        records.append({"t": sec + nsec * 1e-9, "incl": incl, "orig": orig, "ip": p[:ihl], "ecn": p[1] & 3,
                        "total": struct.unpack(">H", p[2:4])[0], "src": ".".join(map(str, p[12:16])),
                        "sport": sport, "dport": dport, "seq": seq, "ack": ack, "flags": flags,
                        "tcp_len": (offset >> 4) * 4})
    return header, records


def rfc1071(header: bytes) -> int:
    s = sum(struct.unpack(f">{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def traced_run(tmp_path: Path, text: str, **kw):
    sc = tmp_path / "s.toml"
    sc.write_text(text)
    pcap = tmp_path / "trace.pcap"
    return lossync.run(sc, progress=False, warn=False, pcap="bottleneck", pcap_file=pcap, **kw), pcap


def test_the_pcap_holds_each_flows_bytes_and_its_drops_as_retransmissions(tmp_path):
    r, pcap = traced_run(tmp_path, TWO_FLOWS)
    (magic, major, minor, _, _, snaplen, linktype), recs = read_pcap(pcap)
    assert (magic, major, minor, linktype) == (0xA1B23C4D, 2, 4, 101)  # nanoseconds, RAW (IPv4)
    assert r.summary["pcap"] == {"link": "bottleneck", "file": str(pcap), "packets": len(recs), "crossed": len(recs),
                                 "capped": False, "max_packets": lossync.engines.PCAP_PACKETS}
    assert 900 < len(recs) < 1100
    # The link is full for most of the run: 2 Mb/s of 1500-byte packets is 166.7 a second.
    assert len(recs) == pytest.approx(166.7 * 6, rel=0.05)
    for x in recs:
        assert (x["incl"], x["orig"], x["total"]) == (40, 1500, 1500) and x["incl"] <= snaplen
        assert rfc1071(x["ip"]) == 0, "a valid IPv4 header checksum"
        assert x["dport"] == 5001 and x["flags"] & 0x10  # data, with ACK set
    assert all(b["t"] >= a["t"] for a, b in zip(recs, recs[1:]))
    drops = Counter(r.drops["flow"])
    assert sum(drops.values()) > 20
    for flow, src in ((0, "10.0.0.1"), (1, "10.0.0.2")):
        seqs = [x["seq"] for x in recs if x["src"] == src]
        assert all(s % MSS == 0 for s in seqs), "sequence numbers count bytes, a packet's worth apart"
        assert len(set(seqs)) == len(seqs), "a packet crosses the link once (no spurious retransmission here)"
        # Packets that crossed = packets delivered: the receiver sits right behind the link.
        delivered = r.summary["flows"][flow]["throughput_pps"] * r.summary["duration_s"]
        assert len(seqs) == round(delivered)
        # A drop's packet first crosses as its retransmission, below the highest byte already seen.
        below, top = 0, -1
        for s in seqs:
            below += s < top
            top = max(top, s)
        assert below == drops[flow]
        # Every packet up to the highest one crossed (the run ends with nothing lost unrepaired).
        assert sorted(seqs) == [k * MSS for k in range(len(seqs))]


def test_tracing_changes_no_number(tmp_path):
    traced, _ = traced_run(tmp_path, TWO_FLOWS)
    plain = lossync.run(tmp_path / "s.toml", progress=False, warn=False)
    del traced.summary["pcap"]
    assert traced.summary == plain.summary
    assert traced.series.equals(plain.series)


def test_the_cap_keeps_the_first_packets_and_the_summary_says_so(tmp_path):
    r, pcap = traced_run(tmp_path, TWO_FLOWS, pcap_packets=100)
    _, recs = read_pcap(pcap)
    assert len(recs) == 100
    t = r.summary["pcap"]
    assert t["capped"] and t["packets"] == 100 and t["crossed"] > 900
    full, _ = traced_run(tmp_path / "..", TWO_FLOWS)
    assert recs == read_pcap(Path(full.summary["pcap"]["file"]))[1][:100]


def test_the_command_line_writes_the_trace_and_says_when_it_is_capped(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(TWO_FLOWS)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "lossync", "run", str(sc), "--out", str(out), "--no-figure",
                        "--pcap", "bottleneck", "--pcap-packets", "50"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert f"wrote {out / 'bottleneck.pcap'} (50 packets of link bottleneck; capped" in r.stdout
    assert len(read_pcap(out / "bottleneck.pcap")[1]) == 50
    assert json.loads((out / "summary.json").read_text())["pcap"]["capped"] is True


@pytest.mark.parametrize(("args", "option"), [
    (["--pcap", "nosuch"], "--pcap"),
    (["--pcap", "bottleneck", "--engine", "fluid"], "--pcap"),
    (["--pcap", "bottleneck", "--pcap-packets", "0"], "--pcap-packets"),
    (["--pcap-file", "x.pcap"], "--pcap-file"),
    # Accepted on main: a capture size with nothing to capture, and an empty drop log from an
    # engine that keeps none (it read as a run without drops).
    (["--pcap-packets", "10"], "--pcap-packets"),
    (["--drops", "d.csv", "--engine", "fluid"], "--drops"),
])
def test_bad_trace_options_are_one_line_naming_the_option(tmp_path, args, option):
    sc = tmp_path / "s.toml"
    sc.write_text(TWO_FLOWS)
    r = subprocess.run([sys.executable, "-m", "lossync", "run", str(sc), *args], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and option in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not list(tmp_path.glob("*.pcap")) and not (tmp_path / "d.csv").exists()


def test_the_python_api_refuses_a_trace_it_cannot_take(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(TWO_FLOWS)
    with pytest.raises(lossync.ScenarioError, match='no link named "nosuch"') as e:
        lossync.run(sc, progress=False, pcap="nosuch", pcap_file=tmp_path / "x.pcap")
    assert e.value.field == "pcap"
    with pytest.raises(lossync.ScenarioError, match="packet engine") as e:
        lossync.run(sc, ['engine="fluid"'], progress=False, pcap="bottleneck", pcap_file=tmp_path / "x.pcap")
    assert e.value.field == "pcap"


@pytest.fixture(scope="module")
def tshark() -> str:
    """tshark, installed from the Debian packages (`apt-get install tshark`) when missing; the
    tests skip, saying why, where that cannot be done."""
    found = shutil.which("tshark")
    if found:
        return found
    if shutil.which("apt-get") is None:
        pytest.skip("tshark is not installed, and there is no apt-get to install it from the Debian packages")
    if os.geteuid() != 0:
        pytest.skip("tshark is not installed, and installing it with apt-get needs root")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "-o", "DPkg::Lock::Timeout=600", "tshark"]
    # One installer at a time across test workers.
    with open("/tmp/lossync-tshark-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(install, env=env, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:  # a stale package list: refresh it once
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=600)
            r = subprocess.run(install, env=env, capture_output=True, text=True, timeout=1200)
    found = shutil.which("tshark")
    if not found:
        why = (r.stderr.strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"tshark could not be installed from the Debian packages: {why}")
    return found


def tshark_fields(tshark: str, pcap: Path, *fields: str, where: str | None = None) -> list[list[str]]:
    cmd = [tshark, "-r", str(pcap), "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields"]
    cmd += [a for f in fields for a in ("-e", f)] + (["-Y", where] if where else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.splitlines()]


@pytest.mark.xdist_group("tshark")
def test_tshark_reads_the_sequence_numbers_and_the_drops_as_retransmissions(tmp_path, tshark):
    r, pcap = traced_run(tmp_path, TWO_FLOWS)
    _, recs = read_pcap(pcap)
    rows = tshark_fields(tshark, pcap, "ip.src", "tcp.seq", "tcp.len")
    assert len(rows) == len(recs)
    assert [(row[0], int(row[1])) for row in rows] == [(x["src"], x["seq"]) for x in recs]
    assert {int(row[2]) for row in rows} == {MSS}, "tshark reads the payload length from the IP header"
    retransmitted = tshark_fields(tshark, pcap, "ip.src", where="tcp.analysis.retransmission")
    # Every drop at the link is repaired within the trace: one retransmission each, per flow.
    assert Counter(row[0] for row in retransmitted) == Counter(f"10.0.0.{f + 1}" for f in r.drops["flow"])
    assert len(retransmitted) == len(r.drops) > 20


@pytest.mark.xdist_group("tshark")
def test_tshark_reads_acks_sack_blocks_and_ecn(tmp_path, tshark):
    r, pcap = traced_run(tmp_path, ECN_TWO_WAY)
    link = r.summary["links"][0]
    rows = tshark_fields(tshark, pcap, "ip.src", "ip.dsfield.ecn", "tcp.flags.ece", "tcp.flags.cwr", "tcp.ack",
                         "tcp.options.sack_le", "tcp.options.sack_re")
    data = [row for row in rows if row[0] == "10.0.0.1"]
    acks = [row for row in rows if row[0] == "10.64.0.1"]
    assert len(data) + len(acks) == len(rows) and len(acks) > 500
    assert len(data) == link["departures_pkts"]
    # The data leave the port with the codepoint it gave them: ECT(0), CE for each mark, and
    # Not-ECT for retransmissions (RFC 3168 §6.1.5), each drop's one.
    ecn = Counter(int(row[1]) for row in data)
    assert set(ecn) == {0, 2, 3}
    assert ecn[3] == link["marks_pkts"] > 5
    assert ecn[0] == link["drops_pkts"] > 5
    # The receiver echoes CE (ECE) and the sender answers with CWR (RFC 3168 §6.1).
    assert any(row[2] in ("1", "True") for row in acks) and any(row[3] in ("1", "True") for row in data)
    # SACK blocks: one packet's bytes, above the cumulative ACK.
    sacks = [(int(row[4]), int(row[5]), int(row[6])) for row in acks if row[5]]
    assert sacks and all(le > ack and re - le == MSS and le % MSS == 0 for ack, le, re in sacks)
    dup = tshark_fields(tshark, pcap, "frame.number", where="tcp.analysis.duplicate_ack")
    assert len(dup) >= 3
    # With the ACKs in the capture too, each drop is still one retransmission (fast ones among them).
    retransmitted = tshark_fields(tshark, pcap, "frame.number", where="tcp.analysis.retransmission")
    assert len(retransmitted) == link["drops_pkts"] > 5
    assert tshark_fields(tshark, pcap, "frame.number", where="tcp.analysis.fast_retransmission")
