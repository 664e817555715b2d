import Foundation
import Logging

/// The service's log lines on standard error: `2026-11-22T23:18:11Z info pushbridge: key=value … message`.
///
/// Metadata is kept as it is set and formatted only when a line is written: Hummingbird sets a request
/// id on every request's logger, and swift-log's `StreamLogHandler` formats all metadata on every set.
/// Made per logger (no process-wide bootstrap).
public struct ServiceLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    /// - Parameters:
    ///   - label: the logger's label.
    ///   - level: the lowest level written.
    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
        if let extra = event.metadata { all.merge(extra) { $1 } }
        var line = Self.timestamp() + " " + event.level.rawValue + " " + label + ":"
        for (key, value) in all.sorted(by: { $0.key < $1.key }) { line += " \(key)=\(value)" }
        line += " \(event.message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
