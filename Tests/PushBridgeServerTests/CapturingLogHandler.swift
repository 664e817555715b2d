import Logging
import PushBridgeServer
import Synchronization

/// Log lines kept in memory, for tests that read what the service logged.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// The service's own line format (``ServiceLogHandler/line(timestamp:level:label:metadata:message:)``), kept in memory.
struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        lines.append(ServiceLogHandler.line(timestamp: "T", level: event.level, label: "pushbridge", metadata: all, message: "\(event.message)"))
    }
}
