// lossync's ns-3 engine: the scenario's dumbbell in ns-3 (what is modelled and how it differs
// from the packet engine: the docstring of engines/ns3/__init__.py, which builds and runs it).
// Usage: dumbbell PARAMS_FILE OUT_DIR; PARAMS_FILE holds `key value` lines (params.h).
// With a wall_limit the run stops soon after that much wall time (CheckWall), and totals.txt says
// how far it got (end_s): benchmarks and --timeout measure ns-3 where it cannot finish.
//
// Topology (flow i):
//   S_i --access (10 C, delay d_i)-- R --bottleneck (C)--> D (one receiver node, a PacketSink per flow)
// The receiver sits right behind the bottleneck, as in the packet engine, and d_i makes the
// empty-network RTT equal the flow's rtt (one access and one bottleneck serialization of a data
// packet and of a pure ACK included). Point-to-point devices add a 2-byte PPP header: the device
// rates are scaled by (packet_size + 2) / packet_size so that a packet_size IP packet takes
// exactly packet_size·8/C on the bottleneck.
//
// Bottleneck buffer: at most B packets in the system, the one being serialized included (the
// packet engine's definition). Drop-tail: no queue disc, a device queue of B-1 packets; when it is
// full the device queue is stopped and the traffic-control layer drops the arrival. An AQM (RED,
// CoDel, PIE, FQ-CoDel): its queue disc of B-2 packets plus a device queue of 1. Every other
// device has no queue disc and a queue no run fills; drops anywhere else are counted and reported
// (they should be zero).
//
// Each flow's receiver is its own listening socket on the receiver node, with the sender's
// congestion-control type and ECN setting (ns-3's DCTCP receiver echoes CE through its
// congestion ops, as in ns-3's dctcp example).
//
// OUT_DIR gets four files:
//   drops.txt   one line per bottleneck drop: time_s flow
//   series.txt  one line per record_interval: time_s queue_pkts departed_total, then per flow
//               cwnd_bytes delivered_bytes (delivered = bytes the receiver read)
//   sojourn.bin the sojourn of every data packet that started its transmission on the bottleneck
//               while measuring, from its arrival at the bottleneck (queue disc or device
//               queue) to the start of its transmission: little-endian int64 picoseconds
//   totals.txt  `key value` lines, `reason drop|mark END START TEXT` lines (the queue disc's
//               drop and mark reasons, counted over the run and at the measurement start), and
//               `start`/`end` per-flow snapshots of running totals
// Nothing is logged per packet except drops and sojourns; the other traces only update counters.

#include "params.h"
#include "totals.h"

#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/fq-codel-queue-disc.h"
#include "ns3/inet-socket-address.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/pointer.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

using namespace ns3;
using namespace lossync_ns3;

namespace
{

const uint32_t PPP_BYTES = 2;
const double ACCESS_SPEEDUP = 10.0;

struct FlowState
{
    Ptr<TcpSocketBase> sock;
    Ptr<TcpSocketBase> listener;
    uint16_t port = 0;
    uint64_t rx = 0;         // bytes the receiver read
    uint64_t sent = 0;       // data segments sent (retransmissions included)
    uint64_t drops = 0;      // bottleneck drops
    uint64_t marks = 0;      // bottleneck CE marks
    uint64_t reductions = 0; // entries into fast recovery, CWR (an ECN echo) or loss (timeout)
    double cwnd_bytes = 0;
    double cwnd_area = 0; // ∫ cwnd dt, byte·s
    double cwnd_t = 0;
};

struct Sim
{
    Params p;
    std::vector<FlowState> flows;
    std::unordered_map<uint32_t, uint32_t> flow_of_addr;
    Ipv4Address receiver;
    Ptr<Node> router;
    std::chrono::steady_clock::time_point wall_start = std::chrono::steady_clock::now();

    // The bottleneck system: queue disc (an AQM) + device queue + the packet being serialized.
    // accepted: entered it; dropped: all drops, dropped_before of them refused on arrival (the
    // others were accepted and dropped later: CoDel at dequeue, FQ-CoDel's fat-flow drops).
    uint64_t accepted = 0, dropped = 0, dropped_before = 0, departed = 0;
    std::map<std::string, uint64_t> drop_reasons, mark_reasons;
    uint32_t data_min_bytes = 0; // arrivals at least this large (IP bytes) are data packets
    std::unordered_map<uint64_t, int64_t> arrived_ps; // data packets in the system: uid -> arrival
    uint64_t queue = 0, queue_max = 0;
    double queue_area = 0, queue_t = 0;
    uint32_t max_wire_bytes = 0;
    uint64_t other_drops = 0;

    bool warm = false, measuring = false;
    Totals start;
    uint64_t records = 0, checks = 0;
    double said = 0;      // wall s of the last progress line
    bool stopped = false; // by the wall-time limit

    FILE* drops_out = nullptr;
    FILE* series_out = nullptr;
    FILE* sojourn_out = nullptr;

    void IntegrateQueue()
    {
        double now = Simulator::Now().GetSeconds();
        queue_area += double(queue) * (now - queue_t);
        queue_t = now;
    }

    void OnAccept(Ptr<const Packet> pkt, uint32_t ip_bytes, uint32_t wire_bytes)
    {
        if (ip_bytes >= data_min_bytes)
        {
            arrived_ps[pkt->GetUid()] = Simulator::Now().GetPicoSeconds();
        }
        IntegrateQueue();
        ++accepted;
        ++queue;
        if (queue > queue_max)
        {
            queue_max = queue;
        }
        if (wire_bytes > max_wire_bytes)
        {
            max_wire_bytes = wire_bytes;
        }
    }

    void OnDepart()
    {
        IntegrateQueue();
        ++departed;
        --queue;
        if ((p.wall_limit > 0 || p.progress > 0) && departed % 16 == 0 && !stopped)
        {
            CheckWall();
        }
    }

    // A packet leaves for the wire: its sojourn, from its arrival at the bottleneck.
    void OnTxBegin(Ptr<const Packet> pkt)
    {
        auto it = arrived_ps.find(pkt->GetUid());
        if (it == arrived_ps.end())
        {
            return;
        }
        if (measuring)
        {
            int64_t ps = Simulator::Now().GetPicoSeconds() - it->second;
            std::fwrite(&ps, sizeof ps, 1, sojourn_out);
        }
        arrived_ps.erase(it);
    }

    // A drop after the packet was accepted (it leaves the system without departing).
    void OnDropAccepted(Ptr<const Packet> pkt)
    {
        IntegrateQueue();
        --queue;
        arrived_ps.erase(pkt->GetUid());
    }

    uint32_t FlowOf(Ipv4Address src) const
    {
        auto it = flow_of_addr.find(src.Get());
        return it == flow_of_addr.end() ? UINT32_MAX : it->second;
    }

    void OnMark(Ipv4Address src, const char* reason)
    {
        ++mark_reasons[reason];
        uint32_t f = FlowOf(src);
        if (f != UINT32_MAX)
        {
            ++flows[f].marks;
        }
    }

    void OnBottleneckDrop(Ipv4Address src, bool before, const char* reason)
    {
        ++dropped;
        dropped_before += before ? 1 : 0;
        ++drop_reasons[reason];
        auto it = flow_of_addr.find(src.Get());
        uint32_t f = it == flow_of_addr.end() ? 0 : it->second;
        if (it != flow_of_addr.end())
        {
            ++flows[f].drops;
        }
        std::fprintf(drops_out, "%.9f %u\n", Simulator::Now().GetSeconds(), f);
        if (warm && !measuring)
        {
            measuring = true;
            Snapshot(start);
            queue_max = queue;
        }
    }

    void UpdateCwndArea(FlowState& f)
    {
        double now = Simulator::Now().GetSeconds();
        f.cwnd_area += f.cwnd_bytes * (now - f.cwnd_t);
        f.cwnd_t = now;
    }

    void Snapshot(Totals& s)
    {
        IntegrateQueue();
        s.t = Simulator::Now().GetSeconds();
        s.accepted = accepted;
        s.dropped = dropped;
        s.dropped_before = dropped_before;
        s.departed = departed;
        s.queue_area = queue_area;
        s.drop_reasons = drop_reasons;
        s.mark_reasons = mark_reasons;
        s.rx.clear();
        s.sent.clear();
        s.drops.clear();
        s.marks.clear();
        s.reductions.clear();
        s.cwnd_area.clear();
        for (auto& f : flows)
        {
            UpdateCwndArea(f);
            s.rx.push_back(f.rx);
            s.sent.push_back(f.sent);
            s.drops.push_back(f.drops);
            s.marks.push_back(f.marks);
            s.reductions.push_back(f.reductions);
            s.cwnd_area.push_back(f.cwnd_area);
        }
    }

    void WarmupEnd()
    {
        warm = true;
        Snapshot(start);
        queue_max = queue;
        measuring = !p.from_first_congestion;
    }

    void Record()
    {
        std::fprintf(series_out, "%.9f %lu %lu", Simulator::Now().GetSeconds(), (unsigned long)queue,
                     (unsigned long)departed);
        for (auto& f : flows)
        {
            std::fprintf(series_out, " %.0f %lu", f.cwnd_bytes, (unsigned long)f.rx);
        }
        std::fputc('\n', series_out);
        ++records;
        double next = double(records) * p.record_interval;
        if (next <= p.duration + 1e-9)
        {
            Simulator::Schedule(Seconds(next) - Simulator::Now(), &Sim::Record, this);
        }
        else if (Simulator::Now() < Seconds(p.duration))
        {
            Simulator::Schedule(Seconds(p.duration) - Simulator::Now(), &Sim::Finish, this);
        }
        else
        {
            Finish();
        }
    }

    // With a wall-time limit or progress: stop if the limit has passed, say how far the run got.
    // Checked every simulated millisecond (records are too far apart: ns-3 can spend minutes on
    // one simulated second at 1-10 Gb/s), events left out of `events`, and every 16 departures
    // from the bottleneck (one millisecond can take seconds in a slow-start overshoot).
    void CheckWall()
    {
        double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
        if (p.wall_limit > 0 && wall > p.wall_limit)
        {
            stopped = true;
            Finish();
        }
        else if (p.progress > 0 && wall >= said + p.progress)
        {
            said = wall;
            std::fprintf(stderr, "progress %.6f\n", Simulator::Now().GetSeconds());
            std::fflush(stderr);
        }
    }

    void WallCheck()
    {
        ++checks;
        CheckWall();
        if (!stopped)
        {
            Simulator::Schedule(MilliSeconds(1), &Sim::WallCheck, this);
        }
    }

    // Ends the run after the current event (events at the same instant that are already
    // scheduled ran before this one).
    void Finish()
    {
        Simulator::Stop();
    }

    void Fill(uint32_t i)
    {
        auto& s = flows[i].sock;
        while (s->GetTxAvailable() >= p.mss)
        {
            if (s->Send(Create<Packet>(p.mss), 0) < 0)
            {
                break;
            }
        }
    }

    void StartFlow(uint32_t i)
    {
        auto& f = flows[i];
        f.sock->Connect(InetSocketAddress(receiver, f.port));
    }
};

Sim* g = nullptr;

// Connects a trace source, failing loudly on a wrong name (TraceConnect only returns false).
template <typename T, typename Cb>
void
Hook(const Ptr<T>& obj, const char* name, const Cb& cb)
{
    if (!obj || !obj->TraceConnectWithoutContext(name, cb))
    {
        Fail(std::string("cannot connect trace source ") + name);
    }
}

void
TraceDeviceEnqueue(Ptr<const Packet> pkt)
{
    g->OnAccept(pkt, pkt->GetSize() - PPP_BYTES, pkt->GetSize());
}

void
TraceQueueDiscEnqueue(Ptr<const QueueDiscItem> item)
{
    g->OnAccept(item->GetPacket(), item->GetSize(), item->GetSize() + PPP_BYTES);
}

void
TraceTxBegin(Ptr<const Packet> pkt)
{
    g->OnTxBegin(pkt);
}

void
TraceDepart(Ptr<const Packet>)
{
    g->OnDepart();
}

// Drop-tail mode: the router's traffic-control layer drops what the stopped bottleneck queue
// cannot take (the packet carries its IPv4 header). Packets for other destinations (ACKs) would
// be drops elsewhere.
void
TraceRouterTcDrop(Ptr<const Packet> pkt)
{
    Ipv4Header h;
    pkt->PeekHeader(h);
    if (h.GetDestination() == g->receiver)
    {
        g->OnBottleneckDrop(h.GetSource(), true, "Device queue full");
    }
    else
    {
        ++g->other_drops;
    }
}

Ipv4Address
SourceOf(Ptr<const QueueDiscItem> item)
{
    auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    return ip ? ip->GetHeader().GetSource() : Ipv4Address();
}

// The queue disc refused an arrival (an AQM's early drop, or a full queue).
void
TraceQueueDiscDropBefore(Ptr<const QueueDiscItem> item, const char* reason)
{
    g->OnBottleneckDrop(SourceOf(item), true, reason);
}

// The queue disc dropped a packet it had accepted (CoDel at dequeue, FQ-CoDel's fat flow).
void
TraceQueueDiscDropAfter(Ptr<const QueueDiscItem> item, const char* reason)
{
    g->OnDropAccepted(item->GetPacket());
    g->OnBottleneckDrop(SourceOf(item), false, reason);
}

void
TraceQueueDiscMark(Ptr<const QueueDiscItem> item, const char* reason)
{
    g->OnMark(SourceOf(item), reason);
}

void
TraceOtherDrop(Ptr<const Packet>)
{
    ++g->other_drops;
}

void
TraceIpDrop(const Ipv4Header&, Ptr<const Packet>, Ipv4L3Protocol::DropReason, Ptr<Ipv4>, uint32_t)
{
    ++g->other_drops;
}

void
TraceCwnd(uint32_t i, uint32_t, uint32_t now)
{
    auto& f = g->flows[i];
    g->UpdateCwndArea(f);
    f.cwnd_bytes = now;
}

void
TraceCongState(uint32_t i, TcpSocketState::TcpCongState_t old, TcpSocketState::TcpCongState_t now)
{
    if ((now == TcpSocketState::CA_RECOVERY && old != TcpSocketState::CA_RECOVERY) ||
        (now == TcpSocketState::CA_CWR && old != TcpSocketState::CA_CWR) ||
        (now == TcpSocketState::CA_LOSS && old != TcpSocketState::CA_LOSS))
    {
        ++g->flows[i].reductions;
    }
}

void
TraceTx(uint32_t i, Ptr<const Packet> pkt, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    if (pkt->GetSize() > 0)
    {
        ++g->flows[i].sent;
    }
}

void
OnConnected(uint32_t i, Ptr<Socket>)
{
    g->Fill(i);
}

void
OnReceive(uint32_t i, Ptr<Socket> s)
{
    while (Ptr<Packet> pkt = s->Recv())
    {
        g->flows[i].rx += pkt->GetSize();
    }
}

void
OnAccepted(uint32_t i, Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeBoundCallback(&OnReceive, i));
}

void
OnConnectFailed(uint32_t i, Ptr<Socket>)
{
    Fail("flow " + std::to_string(i) + " could not connect");
}

void
OnSendSpace(uint32_t i, Ptr<Socket>, uint32_t)
{
    g->Fill(i);
}

void
ConnectQueueTraces(Ptr<NetDevice> dev)
{
    auto p2p = DynamicCast<PointToPointNetDevice>(dev);
    Hook(p2p->GetQueue(), "Drop", MakeCallback(&TraceOtherDrop));
    Hook(p2p, "MacTxDrop", MakeCallback(&TraceOtherDrop));
    Hook(p2p, "PhyTxDrop", MakeCallback(&TraceOtherDrop));
    Hook(p2p, "PhyRxDrop", MakeCallback(&TraceOtherDrop));
}

Ptr<TcpCongestionOps>
CongestionOps(const FlowSpec& f)
{
    ObjectFactory cc;
    cc.SetTypeId(f.type_id);
    for (auto& [k, v] : f.attrs)
    {
        cc.Set(k, StringValue(v));
    }
    return cc.Create<TcpCongestionOps>();
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 3)
    {
        Fail("usage: dumbbell PARAMS_FILE OUT_DIR");
    }
    Sim sim;
    g = &sim;
    sim.p = ReadParams(argv[1]);
    const Params& p = sim.p;
    std::string out = argv[2];
    sim.drops_out = std::fopen((out + "/drops.txt").c_str(), "w");
    sim.series_out = std::fopen((out + "/series.txt").c_str(), "w");
    sim.sojourn_out = std::fopen((out + "/sojourn.bin").c_str(), "wb");
    if (!sim.drops_out || !sim.series_out || !sim.sojourn_out)
    {
        Fail("cannot write to " + out);
    }
    static char drops_buf[1 << 20], series_buf[1 << 16], sojourn_buf[1 << 20];
    std::setvbuf(sim.drops_out, drops_buf, _IOFBF, sizeof drops_buf);
    std::setvbuf(sim.series_out, series_buf, _IOFBF, sizeof series_buf);
    std::setvbuf(sim.sojourn_out, sojourn_buf, _IOFBF, sizeof sojourn_buf);
    // Data packets: larger than any pure ACK or SYN (IP bytes; a data packet is packet_size).
    sim.data_min_bytes = p.ack_bytes + 40;
    for (auto& [k, v] : p.defaults)
    {
        Config::SetDefault(k, StringValue(v));
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(p.seed);

    // TCP defaults shared by every socket (per-flow ones are set on each socket below).
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(p.mss));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(p.delack_count));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(p.delack_timeout)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(p.sndbuf_bytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(p.rcvbuf_bytes));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    // RTO = SRTT + max(200 ms, 4·RTTVAR), as Linux and the packet engine (ns-3 uses the clock
    // granularity as the floor of the variance term; MinRto then never binds).
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));

    const uint32_t n = p.flows.size();
    const double scale = double(p.packet_size + PPP_BYTES) / double(p.packet_size);
    const double bn_bps = p.capacity_bps * scale;
    const uint32_t data_wire = p.packet_size + PPP_BYTES;
    const uint32_t ack_wire = p.ack_bytes + PPP_BYTES;

    NodeContainer senders;
    senders.Create(n);
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> dest = CreateObject<Node>();
    sim.router = router;
    InternetStackHelper stack;
    stack.Install(senders);
    stack.Install(router);
    stack.Install(dest);

    const std::string huge = "100000000p";
    PointToPointHelper bn;
    bn.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(std::llround(bn_bps)))));
    bn.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    bn.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(huge)));
    NetDeviceContainer bn_dev = bn.Install(router, dest);

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bn_if = addr.Assign(bn_dev);
    sim.receiver = bn_if.GetAddress(1);

    std::vector<NetDeviceContainer> acc_dev(n);
    std::vector<Ipv4Address> sender_addr(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        const FlowSpec& f = p.flows[i];
        const double acc_bps = f.access_bps > 0 ? f.access_bps * scale : ACCESS_SPEEDUP * bn_bps;
        const double ser_s = 8.0 * data_wire / bn_bps + 8.0 * data_wire / acc_bps +
                             8.0 * ack_wire / bn_bps + 8.0 * ack_wire / acc_bps;
        double d = (f.rtt_s - ser_s) / 2.0;
        if (d < 0)
        {
            Fail("flow " + std::to_string(i) + ": rtt shorter than the serialization times");
        }
        PointToPointHelper acc;
        acc.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(std::llround(acc_bps)))));
        acc.SetChannelAttribute("Delay", TimeValue(Seconds(d)));
        acc.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(huge)));
        acc_dev[i] = acc.Install(senders.Get(i), router);
        addr.NewNetwork();
        Ipv4InterfaceContainer ifc = addr.Assign(acc_dev[i]);
        sender_addr[i] = ifc.GetAddress(0);
        sim.flow_of_addr[ifc.GetAddress(0).Get()] = i;
    }

    // No queue disc anywhere (Ipv4AddressHelper installed fq_codel); the AQM on the bottleneck only.
    TrafficControlHelper tch;
    tch.Uninstall(bn_dev);
    for (auto& d : acc_dev)
    {
        tch.Uninstall(d);
    }
    auto bn_p2p = DynamicCast<PointToPointNetDevice>(bn_dev.Get(0));
    if (p.queue == "qdisc")
    {
        // The queue disc holds B-2 (its MaxSize, set by the caller), the device queue 1, the wire 1.
        bn_p2p->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1));
        TrafficControlHelper aqm;
        aqm.SetRootQueueDisc(p.qdisc_type);
        QueueDiscContainer qdc = aqm.Install(NetDeviceContainer(bn_dev.Get(0)));
        Ptr<QueueDisc> qd = qdc.Get(0);
        for (auto& [k, v] : p.qdisc_attrs)
        {
            if (k == "@quantum")
            {
                auto fq = DynamicCast<FqCoDelQueueDisc>(qd);
                if (!fq)
                {
                    Fail("@quantum needs an FqCoDelQueueDisc");
                }
                fq->SetQuantum(uint32_t(std::stoul(v)));
            }
            else if (!qd->SetAttributeFailSafe(k, StringValue(v)))
            {
                Fail("cannot set " + p.qdisc_type + "::" + k + " to " + v);
            }
        }
        Hook(qd, "Enqueue", MakeCallback(&TraceQueueDiscEnqueue));
        Hook(qd, "DropBeforeEnqueue", MakeCallback(&TraceQueueDiscDropBefore));
        Hook(qd, "DropAfterDequeue", MakeCallback(&TraceQueueDiscDropAfter));
        Hook(qd, "Mark", MakeCallback(&TraceQueueDiscMark));
        Hook(bn_p2p->GetQueue(), "Drop", MakeCallback(&TraceOtherDrop));
        Hook(router->GetObject<TrafficControlLayer>(),
             "TcDrop", MakeCallback(&TraceOtherDrop));
    }
    else
    {
        bn_p2p->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, p.buffer_pkts - 1));
        Hook(bn_p2p->GetQueue(), "Enqueue", MakeCallback(&TraceDeviceEnqueue));
        Hook(bn_p2p->GetQueue(), "Drop", MakeCallback(&TraceOtherDrop));
        Hook(router->GetObject<TrafficControlLayer>(),
             "TcDrop", MakeCallback(&TraceRouterTcDrop));
    }
    Hook(bn_p2p, "PhyTxBegin", MakeCallback(&TraceTxBegin));
    Hook(bn_p2p, "PhyTxEnd", MakeCallback(&TraceDepart));
    Hook(bn_p2p, "MacTxDrop", MakeCallback(&TraceOtherDrop));
    Hook(bn_p2p, "PhyTxDrop", MakeCallback(&TraceOtherDrop));
    ConnectQueueTraces(bn_dev.Get(1));
    for (auto& d : acc_dev)
    {
        ConnectQueueTraces(d.Get(0));
        ConnectQueueTraces(d.Get(1));
    }
    for (uint32_t i = 0; i < n; ++i)
    {
        Hook(senders.Get(i)->GetObject<TrafficControlLayer>(),
             "TcDrop", MakeCallback(&TraceOtherDrop));
        Hook(senders.Get(i)->GetObject<Ipv4L3Protocol>(),
             "Drop", MakeCallback(&TraceIpDrop));
    }
    Hook(dest->GetObject<TrafficControlLayer>(), "TcDrop", MakeCallback(&TraceOtherDrop));
    Hook(dest->GetObject<Ipv4L3Protocol>(), "Drop", MakeCallback(&TraceIpDrop));
    Hook(router->GetObject<Ipv4L3Protocol>(), "Drop", MakeCallback(&TraceIpDrop));

    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    // Receivers: a listening socket per flow on the receiver node (PacketSink's, but with the
    // flow's congestion-control type and ECN setting: ns-3's DCTCP receiver sends its CE echo
    // through its congestion ops).
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));
    sim.flows.resize(n);
    for (uint32_t i = 0; i < n; ++i)
    {
        const FlowSpec& f = p.flows[i];
        FlowState& fs = sim.flows[i];
        fs.port = uint16_t(5000 + i);
        fs.listener = DynamicCast<TcpSocketBase>(Socket::CreateSocket(dest, TcpSocketFactory::GetTypeId()));
        fs.listener->SetAttribute("UseEcn", StringValue(f.ecn));
        fs.listener->SetCongestionControlAlgorithm(CongestionOps(f));
        fs.listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), fs.port));
        fs.listener->Listen();
        fs.listener->ShutdownSend();
        fs.listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                       MakeBoundCallback(&OnAccepted, i));
    }

    // Senders: a bulk sender per flow (BulkSendApplication's loop: keep the send buffer full),
    // with its own congestion-control object so each flow gets its variant and parameters.
    for (uint32_t i = 0; i < n; ++i)
    {
        const FlowSpec& f = p.flows[i];
        FlowState& fs = sim.flows[i];
        // Pacing lives in the socket's TcpSocketState, which takes the defaults in force when
        // the socket is created.
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(f.pacing));
        Config::SetDefault("ns3::TcpSocketState::PacingSsRatio", UintegerValue(f.pacing_ss_pct));
        Config::SetDefault("ns3::TcpSocketState::PacingCaRatio", UintegerValue(f.pacing_ca_pct));
        Config::SetDefault("ns3::TcpSocketState::MaxPacingRate", DataRateValue(DataRate(uint64_t(1e13))));
        Ptr<Socket> s = Socket::CreateSocket(senders.Get(i), TcpSocketFactory::GetTypeId());
        fs.sock = DynamicCast<TcpSocketBase>(s);
        // ECN first: DCTCP's Init turns it on (and selects its own echo mode).
        fs.sock->SetAttribute("UseEcn", StringValue(f.ecn));
        fs.sock->SetCongestionControlAlgorithm(CongestionOps(f));
        fs.sock->SetAttribute("InitialCwnd", UintegerValue(f.iw_pkts));
        if (f.ssthresh_pkts > 0)
        {
            double b = std::min(4.0e9, f.ssthresh_pkts * p.mss);
            fs.sock->SetAttribute("InitialSlowStartThreshold", UintegerValue(uint64_t(b)));
        }
        Hook(fs.sock, "CongestionWindow", MakeBoundCallback(&TraceCwnd, i));
        Hook(fs.sock, "CongState", MakeBoundCallback(&TraceCongState, i));
        Hook(fs.sock, "Tx", MakeBoundCallback(&TraceTx, i));
        fs.sock->Bind();
        fs.sock->SetConnectCallback(MakeBoundCallback(&OnConnected, i),
                                    MakeBoundCallback(&OnConnectFailed, i));
        fs.sock->SetSendCallback(MakeBoundCallback(&OnSendSpace, i));
        Simulator::Schedule(Seconds(f.start_s), &Sim::StartFlow, &sim, i);
    }

    sim.start.rx.assign(n, 0);
    sim.start.sent.assign(n, 0);
    sim.start.drops.assign(n, 0);
    sim.start.marks.assign(n, 0);
    sim.start.reductions.assign(n, 0);
    sim.start.cwnd_area.assign(n, 0);
    if (p.warmup > 0)
    {
        Simulator::Schedule(Seconds(p.warmup), &Sim::WarmupEnd, &sim);
    }
    else
    {
        Simulator::ScheduleNow(&Sim::WarmupEnd, &sim);
    }
    Simulator::ScheduleNow(&Sim::Record, &sim);
    sim.wall_start = std::chrono::steady_clock::now();
    if (p.wall_limit > 0 || p.progress > 0)
    {
        Simulator::Schedule(MilliSeconds(1), &Sim::WallCheck, &sim);
    }
    Simulator::Run();

    Totals end;
    sim.Snapshot(end);
    uint64_t events = Simulator::GetEventCount() - sim.checks;
    std::fclose(sim.drops_out);
    std::fclose(sim.series_out);
    std::fclose(sim.sojourn_out);

    WriteTotals(out + "/totals.txt",
                end,
                sim.start,
                RunEnd{double(events),
                       double(sim.queue),
                       double(sim.queue_max),
                       double(sim.other_drops),
                       double(sim.max_wire_bytes),
                       bn_bps},
                n);
    Simulator::Destroy();
    return 0;
}
