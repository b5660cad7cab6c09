// The ns-3 engine program's running totals and the totals.txt it writes at the end
// (dumbbell.cc; read by engines/ns3/__init__.py). Included by dumbbell.cc only.
#pragma once

#include "params.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace lossync_ns3
{

struct Totals
{
    double t = 0;
    uint64_t accepted = 0, dropped = 0, dropped_before = 0, departed = 0;
    double queue_area = 0; // ∫ system occupancy dt, packet·s
    std::map<std::string, uint64_t> drop_reasons, mark_reasons;
    std::vector<uint64_t> rx, sent, drops, marks, reductions;
    std::vector<double> cwnd_area;
};

/// What the run knows at its end besides the totals.
struct RunEnd
{
    double events, queue_end, queue_max, other_drops, max_wire_bytes, bottleneck_bps;
};

/// totals.txt: `key value` lines, the queue disc's drop and mark reasons, and per flow the
/// totals at the end and at the measurement start.
inline void
WriteTotals(const std::string& path, const Totals& end, const Totals& start, const RunEnd& e, uint32_t n)
{
    FILE* t = std::fopen(path.c_str(), "w");
    if (!t)
    {
        Fail("cannot write totals");
    }
    auto kv = [t](const char* k, double v) { std::fprintf(t, "%s %.17g\n", k, v); };
    kv("end_s", end.t);
    kv("measured_from_s", start.t);
    kv("events", e.events);
    kv("accepted", double(end.accepted));
    kv("dropped", double(end.dropped));
    kv("dropped_before", double(end.dropped_before));
    kv("departed", double(end.departed));
    kv("queue_end", e.queue_end);
    kv("queue_max", e.queue_max);
    kv("queue_area", end.queue_area);
    kv("start_accepted", double(start.accepted));
    kv("start_dropped", double(start.dropped));
    kv("start_dropped_before", double(start.dropped_before));
    kv("start_departed", double(start.departed));
    kv("start_queue_area", start.queue_area);
    kv("other_drops", e.other_drops);
    kv("max_wire_bytes", e.max_wire_bytes);
    kv("bottleneck_bps", e.bottleneck_bps);
    auto reasons = [t](const char* kind, const std::map<std::string, uint64_t>& e,
                       const std::map<std::string, uint64_t>& s) {
        for (auto& [why, count] : e)
        {
            auto at = s.find(why);
            std::fprintf(t, "reason %s %lu %lu %s\n", kind, (unsigned long)count,
                         (unsigned long)(at == s.end() ? 0 : at->second), why.c_str());
        }
    };
    reasons("drop", end.drop_reasons, start.drop_reasons);
    reasons("mark", end.mark_reasons, start.mark_reasons);
    for (uint32_t i = 0; i < n; ++i)
    {
        // flow i: rx sent drops reductions cwnd_area marks (end), then the same at the
        // measurement start
        std::fprintf(t, "flow %u %lu %lu %lu %lu %.17g %lu %lu %lu %lu %lu %.17g %lu\n", i,
                     (unsigned long)end.rx[i], (unsigned long)end.sent[i], (unsigned long)end.drops[i],
                     (unsigned long)end.reductions[i], end.cwnd_area[i], (unsigned long)end.marks[i],
                     (unsigned long)start.rx[i], (unsigned long)start.sent[i],
                     (unsigned long)start.drops[i], (unsigned long)start.reductions[i],
                     start.cwnd_area[i], (unsigned long)start.marks[i]);
    }
    std::fclose(t);
}

} // namespace lossync_ns3
