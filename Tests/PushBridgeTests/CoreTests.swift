import Foundation
import PushBridgeCore
import PushBridgeJSON
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

    @Test func decisionJSONShapes() {
        #expect(PushDecision.suppressed(.doNotDisturb).jsonText == "{\"push\":false,\"reason\":\"do-not-disturb\"}")
        #expect(SuppressionReason.allCases.map(\.rawValue) == [
            "online", "no-device", "ignored", "empty-content", "do-not-disturb", "muted", "not-mentioned", "payload-too-large",
        ])
    }
}
