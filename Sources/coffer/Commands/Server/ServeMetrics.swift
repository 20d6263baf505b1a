import CofferServer
import CoreMetrics
import Foundation
import Prometheus

/// swift-metrics into a Prometheus registry, each metric with its `# HELP` line
/// (``RegistrationServer/metricHelp``): swift-prometheus's own factory writes none.
struct HelpfulPrometheusFactory: CoreMetrics.MetricsFactory {
    let registry: PrometheusCollectorRegistry
    let help: [String: String]
    /// The buckets of every duration histogram: from a millisecond to ten seconds.
    static let buckets: [Duration] = [.milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
                                      .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)]

    /// The metric's name and help (its name as given: no unit is appended).
    private func named(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: named(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        // Coffer's recorders are gauges.
        registry.makeGauge(descriptor: named(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: named(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(descriptor: named(label), labels: dimensions, buckets: Self.buckets)
    }

    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

/// The process's own metrics, read from /proc at each scrape, and the build's: Prometheus' standard
/// `process_*` names, and `coffer_build_info`.
enum ProcessMetrics {
    /// When `coffer serve` started (a unit's `ProcSubset=pid` hides `/proc/uptime`, which the start
    /// time would otherwise be read from).
    nonisolated(unsafe) static var started = Date()

    static func text(version: String, commit: String) -> String {
        var lines = [
            "# HELP coffer_build_info The release and commit this server was built from (always 1).",
            "# TYPE coffer_build_info gauge",
            "coffer_build_info{version=\"\(version)\",commit=\"\(commit)\"} 1",
        ]
        #if os(Linux)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") {
            // The fields after the command name (which may hold spaces): state is field 3.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            if fields.count > 21, let user = Double(fields[11]), let system = Double(fields[12]), ticks > 0 {
                lines += ["# HELP process_cpu_seconds_total CPU time the process used (user and system), in seconds.", "# TYPE process_cpu_seconds_total counter",
                          "process_cpu_seconds_total \((user + system) / ticks)"]
            }
        }
        if let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
            let pages = statm.split(separator: " ")
            if pages.count > 1, let resident = Double(pages[1]), let virtual = Double(pages[0]) {
                let size = Double(sysconf(Int32(_SC_PAGESIZE)))
                lines += ["# HELP process_resident_memory_bytes Resident memory, in bytes.", "# TYPE process_resident_memory_bytes gauge",
                          "process_resident_memory_bytes \(Int(resident * size))",
                          "# HELP process_virtual_memory_bytes Virtual memory, in bytes.", "# TYPE process_virtual_memory_bytes gauge",
                          "process_virtual_memory_bytes \(Int(virtual * size))"]
            }
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            lines += ["# HELP process_open_fds Open file descriptors.", "# TYPE process_open_fds gauge", "process_open_fds \(descriptors.count)"]
        }
        #endif
        lines += ["# HELP process_start_time_seconds When the process started, in seconds since the Unix epoch.", "# TYPE process_start_time_seconds gauge",
                  "process_start_time_seconds \(Int(started.timeIntervalSince1970))"]
        return lines.joined(separator: "\n") + "\n"
    }
}
