import Foundation

/// A point in time as milliseconds since the Unix epoch (UTC).
///
/// PushBridge does its own ISO 8601 handling so that deciding never needs `Calendar`.
public struct Instant: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public func adding(seconds: Int64) -> Instant { Instant(milliseconds: milliseconds + seconds * 1000) }
    public func adding(minutes: Int64) -> Instant { adding(seconds: minutes * 60) }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
    /// - Parameter text: an ISO 8601 date-time with an explicit offset.
    public init?(iso8601 text: String) {
        let b = Array(text.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var v = 0
            for i in at..<(at + count) {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, let year = digits(0, 4), b[4] == 45, let month = digits(5, 2), b[7] == 45,
            let day = digits(8, 2), b[10] == 84 || b[10] == 116, let hour = digits(11, 2), b[13] == 58,
            let minute = digits(14, 2), b[16] == 58, let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= Instant.daysIn(month: month, year: year), hour < 24, minute < 60, second < 60
        else { return nil }
        var i = 19
        var millis = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 100
            let start = i
            while i < b.count, b[i] >= 48 && b[i] <= 57 {
                millis += Int(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offsetSeconds = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            let sign = b[i] == 45 ? -1 : 1
            guard let oh = digits(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let om = digits(i + 4, 2), oh < 24, om < 60 else { return nil }
            offsetSeconds = sign * (oh * 3600 + om * 60)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = Instant.daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        self.milliseconds = seconds * 1000 + Int64(millis)
    }

    /// `2026-03-02T09:15:00Z` (milliseconds shown only when not zero).
    public var description: String {
        let totalSeconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let ms = Int(milliseconds - totalSeconds * 1000)
        var days = totalSeconds / 86_400
        var rest = totalSeconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        let (y, m, d) = Instant.civilFromDays(Int(days))
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var s = "\(y)-\(two(m))-\(two(d))T\(two(Int(rest / 3600))):\(two(Int(rest % 3600 / 60))):\(two(Int(rest % 60)))"
        if ms != 0 {
            let t = String(ms)
            s += "." + String(repeating: "0", count: 3 - t.count) + t
        }
        return s + "Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
