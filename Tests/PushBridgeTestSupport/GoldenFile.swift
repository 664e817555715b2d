import Foundation
import Testing

/// Golden files under `Tests/Data/`, as swift-argument-parser keeps its expected outputs: a test
/// compares what it made with the file, line by line, and `PUSHBRIDGE_RECORD_GOLDEN=1` writes the
/// file instead (then review the diff in git).
package enum GoldenFile {
    /// Whether this run records golden files instead of checking them.
    package static var isRecording: Bool { ProcessInfo.processInfo.environment["PUSHBRIDGE_RECORD_GOLDEN"] == "1" }

    /// The file's path.
    package static func path(_ name: String) -> String { Repository.root.appendingPathComponent("Tests/Data/\(name)").path }

    /// The file's text, or `nil` when there is none.
    package static func read(_ name: String) -> String? { try? String(contentsOfFile: path(name), encoding: .utf8) }

    /// Checks `actual` against the golden file `name` (records it in record mode): a difference is
    /// reported with its first differing line, both ways.
    package static func check(_ actual: String, against name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        if isRecording {
            try actual.write(toFile: path(name), atomically: true, encoding: .utf8)
            return
        }
        guard let expected = read(name) else {
            Issue.record("no golden file Tests/Data/\(name): run with PUSHBRIDGE_RECORD_GOLDEN=1 to make it", sourceLocation: sourceLocation)
            return
        }
        guard expected != actual else { return }
        let (want, got) = (expected.split(separator: "\n", omittingEmptySubsequences: false), actual.split(separator: "\n", omittingEmptySubsequences: false))
        let line = zip(want, got).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(want.count, got.count)
        Issue.record(
            """
            Tests/Data/\(name) differs at line \(line + 1) (\(want.count) lines expected, \(got.count) made):
            - \(line < want.count ? String(want[line]) : "(end of file)")
            + \(line < got.count ? String(got[line]) : "(end of output)")
            """, sourceLocation: sourceLocation)
    }

    /// Bytes as lines of 32 bytes in hex.
    package static func hex(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 32).map { start in
            bytes[start..<min(start + 32, bytes.count)].map { String(format: "%02x", $0) }.joined()
        }.joined(separator: "\n") + "\n"
    }

    /// The bytes of a hex golden file (lines of hex digits).
    package static func bytes(fromHex text: String) -> [UInt8] {
        let digits = Array(text.utf8.filter { $0 != 10 && $0 != 13 })
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }
}
