import Foundation
import PushBridgeCore
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

@Suite("Core")
struct CoreTests {
    @Test func windowsAreHalfOpenAndWrap() {
        let day = DoNotDisturbWindow(startMinute: 7 * 60, endMinute: 17 * 60)
        #expect(!day.contains(minuteOfDay: 419))
        #expect(day.contains(minuteOfDay: 420))
        #expect(day.contains(minuteOfDay: 1019))
        #expect(!day.contains(minuteOfDay: 1020))
        let night = DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 8 * 60)
        #expect(night.contains(minuteOfDay: 1320))
        #expect(night.contains(minuteOfDay: 0))
        #expect(night.contains(minuteOfDay: 479))
        #expect(!night.contains(minuteOfDay: 480))
        #expect(!night.contains(minuteOfDay: 1319))
        #expect(DoNotDisturbWindow(startMinute: 0, endMinute: 1440).isAllDay)
        #expect(DoNotDisturbWindow(startMinute: 300, endMinute: 300).isAllDay)
        let untilMidnight = DoNotDisturbWindow(startMinute: 22 * 60, endMinute: 1440)
        #expect(untilMidnight.contains(minuteOfDay: 1439))
        #expect(!untilMidnight.contains(minuteOfDay: 0))
    }

    @Test func minuteWindowsWidenToWholeHours() {
        let w = DoNotDisturbWindow(startMinute: 21 * 60 + 30, endMinute: 7 * 60 + 15)
        #expect(w.wholeHours == (21, 8))
        #expect(DoNotDisturbWindow.allDay.wholeHours == (0, 24))
    }

    @Test func iso8601() throws {
        #expect(Instant(iso8601: "1970-01-01T00:00:00Z")?.milliseconds == 0)
        #expect(Instant(iso8601: "2026-03-02T09:15:00Z")?.milliseconds == 1_772_442_900_000)
        #expect(Instant(iso8601: "2026-03-02T17:15:00+08:00") == Instant(iso8601: "2026-03-02T09:15:00Z"))
        #expect(Instant(iso8601: "2026-03-02T09:15:00.250Z")?.milliseconds == 1_772_442_900_250)
        #expect(Instant(iso8601: "2026-02-30T00:00:00Z") == nil)
        #expect(Instant(iso8601: "2026-03-02T09:15:00") == nil)
        #expect(Instant(iso8601: "2026-03-02 09:15:00Z") == nil)
        let instant = try #require(Instant(iso8601: "2024-02-29T23:59:59.5Z"))
        #expect(instant.description == "2024-02-29T23:59:59.500Z")
        #expect(Instant(iso8601: instant.description) == instant)
    }

    @Test func localClockUsesTheZoneOffsetAtThatInstant() throws {
        let ny = LocalClock(timeZone: try #require(TimeZone(identifier: "America/New_York")))
        #expect(ny.minuteOfDay(at: try #require(Instant(iso8601: "2026-03-02T12:00:00Z"))) == 7 * 60)  // EST
        #expect(ny.minuteOfDay(at: try #require(Instant(iso8601: "2026-03-09T12:00:00Z"))) == 8 * 60)  // EDT
    }

    @Test func templatesFillPlaceholders() {
        #expect(PushTemplate.fill("Hi {0}, {1}!", with: ["Ann", "welcome"]) == "Hi Ann, welcome!")
        #expect(PushTemplate.fill("{0} and {2}", with: ["a"]) == "a and {2}")
        #expect(PushTemplate.fill("{x} {", with: ["a"]) == "{x} {")
    }

    @Test func shorteningKeepsWholeGraphemes() {
        let family = "👨‍👩‍👧"  // one grapheme, 18 bytes
        #expect(PayloadRenderer.shortened(family + family, toLiteralBytes: 2 + 18 + 3) == family + "…")
        #expect(PayloadRenderer.shortened(family + family, toLiteralBytes: 2 + 18 + 2) == "…")
        #expect(PayloadRenderer.shortened("abc", toLiteralBytes: 4) == nil)
        #expect(PayloadRenderer.shortened("a\"b", toLiteralBytes: 2 + 3 + 3) == "a\"" + "…")
    }

    /// Texts of escapes, multi-byte scalars and multi-scalar graphemes at every offset from the
    /// shortener's 8- and 32-byte steps, against the longest whole-grapheme prefix found one
    /// grapheme at a time.
    @Test func shorteningMatchesGraphemeByGrapheme() {
        let pieces = ["a", "bcdefghij", "\"", "\\", "\n", "\u{1}", "é", "中", "👨‍👩‍👧", "e\u{301}", "klmnopqrstuvwxyz0123456789"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        func literalSize(_ text: String) -> Int { JSONWriter.encodedLength(ofString: text) }
        for _ in 0..<120 {
            let text = (0..<(1 + next(24))).map { _ in pieces[next(pieces.count)] }.joined()
            for budget in 0...(literalSize(text) + 4) {
                var expected: String? = nil
                var prefix = ""
                if literalSize("…") <= budget { expected = "…" }
                for character in text {
                    prefix.append(character)
                    if literalSize(prefix + "…") <= budget { expected = prefix + "…" } else { break }
                }
                #expect(PayloadRenderer.shortened(text, toLiteralBytes: budget) == expected, "\(Array(text.utf8)) in \(budget) bytes")
            }
        }
    }

    /// Every byte that needs an escape, at every offset from the writer's 8- and 32-byte steps,
    /// written as one escaper byte by byte writes it; a copy of a writer writes on its own.
    @Test func writerEscapesAtEveryOffset() {
        func expected(_ bytes: [UInt8]) -> [UInt8] {
            var out: [UInt8] = [0x22]
            for b in bytes {
                switch b {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += Array("\\n".utf8)
                case 0x0D: out += Array("\\r".utf8)
                case 0x09: out += Array("\\t".utf8)
                case 0x08: out += Array("\\b".utf8)
                case 0x0C: out += Array("\\f".utf8)
                case 0..<0x20: out += Array(String(format: "\\u%04x", b).utf8)
                default: out.append(b)
                }
            }
            return out + [0x22]
        }
        let special: [UInt8] = Array(0..<0x20) + [0x22, 0x5C, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xC3, 0xFF]
        for length in Array(1...17) + [31, 32, 33, 64, 70] {
            for offset in 0..<length {
                for b in special {
                    var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    bytes[offset] = b
                    var w = JSONWriter(capacity: 1)
                    bytes.withUnsafeBufferPointer { w.literal($0) }
                    #expect(w.bytes == expected(bytes), "byte \(b) at \(offset) of \(length)")
                }
            }
        }
        var a = JSONWriter(capacity: 4)
        a.raw("[1,")
        var b = a
        a.raw("2]")
        b.string("three")
        b.raw("]")
        #expect(a.string == "[1,2]")
        #expect(b.string == "[1,\"three\"]")
        b.removeAll()
        b.integer(-1234567)
        #expect(b.string == "-1234567")
        #expect(a.string == "[1,2]")
    }

    /// A writer grown from its smallest buffer through many doublings keeps every byte, and copies
    /// taken along the way keep theirs while the original goes on writing.
    @Test func writerGrowsAndCopiesKeepTheirBytes() {
        var w = JSONWriter(capacity: 1)
        var expected = ""
        var copies: [(JSONWriter, String)] = []
        for i in 0..<3_000 {
            w.string("k\(i)")
            w.integer(i * 7919)
            expected += "\"k\(i)\"\(i * 7919)"
            if i % 250 == 0 { copies.append((w, expected)) }
        }
        #expect(w.string == expected)
        #expect(w.count == expected.utf8.count)
        for (copy, text) in copies { #expect(copy.string == text) }
        var last = copies[copies.count - 1].0
        last.raw("!")
        #expect(last.string == copies[copies.count - 1].1 + "!")
        #expect(w.string == expected)
    }

    @Test func decisionJSONShapes() {
        #expect(PushDecision.suppressed(.doNotDisturb).jsonText == "{\"push\":false,\"reason\":\"do-not-disturb\"}")
        #expect(SuppressionReason.allCases.map(\.rawValue) == [
            "online", "no-device", "ignored", "empty-content", "do-not-disturb", "muted", "not-mentioned", "payload-too-large",
            "command", "large-group",
        ])
    }
}
