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
        let line = Self.line(timestamp: Self.timestamp(), level: event.level, label: label, metadata: all, message: "\(event.message)")
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// One log line, ending in `\n`: `TIME LEVEL LABEL: key=value … message`. Every value and the
    /// message pass through `escaped(_:)`, so a value from a request (an id, an error's `found`)
    /// can never start a line of its own or pass for another key.
    /// - Parameters:
    ///   - timestamp: the time, as written.
    ///   - level: the level.
    ///   - label: the logger's label.
    ///   - metadata: the keys and values, written sorted by key.
    ///   - message: the message.
    public static func line(timestamp: String, level: Logger.Level, label: String, metadata: Logger.Metadata, message: String) -> String {
        var line = timestamp + " " + level.rawValue + " " + label + ":"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { line += " " + escaped(key) + "=" + escaped("\(value)") }
        line += " " + escaped(message, quoting: false) + "\n"
        return line
    }

    /// A value as it goes into a line: as it is when it is one plain word (no space, quote,
    /// backslash or control character: `outcomes=no-device=1,push=1` stays so), otherwise in double quotes with `\"`, `\\`, `\n`,
    /// `\r`, `\t` and `\u{XXXX}` for every other control character and line separator.
    /// - Parameters:
    ///   - text: the value.
    ///   - quoting: whether a value that is not plain is put in quotes (a message is only escaped).
    public static func escaped(_ text: String, quoting: Bool = true) -> String {
        func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
            let v = scalar.value
            return v < 0x20 || v == 0x7F || (v >= 0x80 && v <= 0x9F) || v == 0x2028 || v == 0x2029 || v == 0x22 || v == 0x5C
        }
        let plain = !text.isEmpty && !text.unicodeScalars.contains { needsEscape($0) || $0 == " " }
        if plain { return text }
        if !quoting && !text.unicodeScalars.contains(where: needsEscape) { return text }
        var out = quoting ? "\"" : ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if needsEscape(scalar) {
                    out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return quoting ? out + "\"" : out
    }

    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
