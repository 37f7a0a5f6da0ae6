// Metrics: counters, gauges and histograms rendered in the Prometheus text
// exposition format 0.0.4.
//
// Loop thread only. Families are declared once (name, help, type); samples
// are keyed by their label set. Values owned by other components (mapping
// states, uptime) are read at scrape time by collectors, so they are never
// stale and need no bookkeeping here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nbdk {

using Labels = std::vector<std::pair<std::string, std::string>>;

// One histogram series: a count per upper bound (not cumulative), the
// total and the sum. A value type, so that a component can keep its own
// and a collector render it.
struct HistogramSeries {
  explicit HistogramSeries(std::vector<double> upper_bounds = {})
      : bounds(std::move(upper_bounds)), buckets(bounds.size(), 0) {}
  void Observe(double value);

  std::vector<double> bounds;  // ascending; +Inf is implied
  std::vector<uint64_t> buckets;
  uint64_t count = 0;
  double sum = 0;
};

// Appends one family's exposition lines; used by collectors.
class MetricsWriter {
 public:
  void Family(const std::string& name, const std::string& help, const char* type);
  void Sample(const std::string& name, const Labels& labels, double value);
  // <name>_bucket{...,le=...} (cumulative, then +Inf), <name>_sum, <name>_count.
  void Histogram(const std::string& name, const Labels& labels, const HistogramSeries& series);
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Metrics {
 public:
  void DeclareCounter(std::string name, std::string help);
  void DeclareHistogram(std::string name, std::string help, std::vector<double> upper_bounds);
  // Undeclared names are a programming error (asserted).
  void Increment(const std::string& name, const Labels& labels, uint64_t by = 1);
  void Observe(const std::string& name, const Labels& labels, double value);
  uint64_t CounterValue(const std::string& name, const Labels& labels) const;

  void AddCollector(std::function<void(MetricsWriter&)> collector);
  std::string Render() const;

 private:
  struct Family {
    std::string help;
    bool histogram = false;
    std::vector<double> bounds;
    std::map<Labels, uint64_t> counters;
    std::map<Labels, HistogramSeries> histograms;
  };
  std::map<std::string, Family> families_;
  std::vector<std::function<void(MetricsWriter&)>> collectors_;
};

// Formats a label set: {a="x",b="y\"z"}; empty labels give "".
std::string FormatLabels(const Labels& labels);

}  // namespace nbdk
