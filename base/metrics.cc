#include "base/metrics.h"

#include <cassert>
#include <cmath>
#include <cstdio>

namespace nbdk {
namespace {

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

void AppendEscaped(std::string* out, const std::string& v) {
  for (char c : v) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '"') {
      out->append("\\\"");
    } else if (c == '\n') {
      out->append("\\n");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

std::string FormatLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += labels[i].first;
    out += "=\"";
    AppendEscaped(&out, labels[i].second);
    out.push_back('"');
  }
  out.push_back('}');
  return out;
}

void HistogramSeries::Observe(double value) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) {
      ++buckets[i];
      break;
    }
  }
  ++count;
  sum += value;
}

void MetricsWriter::Histogram(const std::string& name, const Labels& labels, const HistogramSeries& series) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i < series.bounds.size(); ++i) {
    cumulative += series.buckets[i];
    Labels l = labels;
    l.emplace_back("le", FormatValue(series.bounds[i]));
    Sample(name + "_bucket", l, static_cast<double>(cumulative));
  }
  Labels inf = labels;
  inf.emplace_back("le", "+Inf");
  Sample(name + "_bucket", inf, static_cast<double>(series.count));
  Sample(name + "_sum", labels, series.sum);
  Sample(name + "_count", labels, static_cast<double>(series.count));
}

void MetricsWriter::Family(const std::string& name, const std::string& help, const char* type) {
  out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void MetricsWriter::Sample(const std::string& name, const Labels& labels, double value) {
  out_ += name + FormatLabels(labels) + " " + FormatValue(value) + "\n";
}

void Metrics::DeclareCounter(std::string name, std::string help) { families_[std::move(name)].help = std::move(help); }

void Metrics::DeclareHistogram(std::string name, std::string help, std::vector<double> upper_bounds) {
  Family& f = families_[std::move(name)];
  f.help = std::move(help);
  f.histogram = true;
  f.bounds = std::move(upper_bounds);
}

void Metrics::Increment(const std::string& name, const Labels& labels, uint64_t by) {
  auto it = families_.find(name);
  assert(it != families_.end() && !it->second.histogram);
  if (it == families_.end()) return;
  it->second.counters[labels] += by;
}

void Metrics::Observe(const std::string& name, const Labels& labels, double value) {
  auto it = families_.find(name);
  assert(it != families_.end() && it->second.histogram);
  if (it == families_.end()) return;
  Family& f = it->second;
  f.histograms.try_emplace(labels, f.bounds).first->second.Observe(value);
}

uint64_t Metrics::CounterValue(const std::string& name, const Labels& labels) const {
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto c = it->second.counters.find(labels);
  return c == it->second.counters.end() ? 0 : c->second;
}

void Metrics::AddCollector(std::function<void(MetricsWriter&)> collector) {
  collectors_.push_back(std::move(collector));
}

std::string Metrics::Render() const {
  MetricsWriter w;
  for (const auto& [name, f] : families_) {
    w.Family(name, f.help, f.histogram ? "histogram" : "counter");
    for (const auto& [labels, v] : f.counters) w.Sample(name, labels, static_cast<double>(v));
    for (const auto& [labels, s] : f.histograms) w.Histogram(name, labels, s);
  }
  for (const auto& c : collectors_) c(w);
  return w.Take();
}

}  // namespace nbdk
