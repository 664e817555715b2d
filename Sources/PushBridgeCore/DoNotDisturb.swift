import Foundation

/// A daily do-not-disturb window in the receiver's local time, half-open: [start, end).
///
/// Minutes of the day, 0–1440. A window whose start is after its end wraps past midnight
/// (22:00–8:00). The all-day window is stored as 0–1440.
public struct DoNotDisturbWindow: Hashable, Sendable {
    public let startMinute: Int
    public let endMinute: Int

    /// The whole day.
    public static let allDay = DoNotDisturbWindow(uncheckedStart: 0, end: 1440)

    init(uncheckedStart start: Int, end: Int) {
        self.startMinute = start
        self.endMinute = end
    }

    /// A window from `start` to `end` minutes of the day; equal ends mean the whole day.
    /// - Parameters:
    ///   - start: 0–1439.
    ///   - end: 0–1440.
    public init(startMinute start: Int, endMinute end: Int) {
        precondition((0..<1440).contains(start) && (0...1440).contains(end), "window minutes out of range")
        if start == end || (start == 0 && end == 1440) {
            self = .allDay
        } else {
            self.init(uncheckedStart: start, end: end)
        }
    }

    public var isAllDay: Bool { startMinute == 0 && endMinute == 1440 }

    /// Whether a local minute of the day (0–1439) lies inside the window.
    public func contains(minuteOfDay m: Int) -> Bool {
        if isAllDay { return true }
        if startMinute < endMinute { return m >= startMinute && m < endMinute }
        return m >= startMinute || m < endMinute
    }

    /// The window widened outward to whole hours: start rounded down, end rounded up; a wrapping
    /// window whose widened ends overlap covers the whole day (0–24).
    public var wholeHours: (start: Int, end: Int) {
        if isAllDay { return (0, 24) }
        let start = startMinute / 60
        var end = (endMinute + 59) / 60
        if startMinute > endMinute && end > start { return (0, 24) }
        if end == 0 { end = 24 }
        return (start, end)
    }

    /// A minute of the day as `H:MM` (1440 as `24:00`).
    public static func clockText(_ minute: Int) -> String {
        let m = minute % 60
        return "\(minute / 60):" + (m < 10 ? "0\(m)" : "\(m)")
    }

    /// `22:30–7:15`.
    public var clockText: String { Self.clockText(startMinute) + "–" + Self.clockText(endMinute) }

    /// The same window with an end of `0:00` written as `24:00` (they contain the same minutes).
    public var normalized: DoNotDisturbWindow {
        endMinute == 0 ? DoNotDisturbWindow(startMinute: startMinute, endMinute: 1440) : self
    }
}

/// The local clock of a receiver: converts instants to minutes of the local day.
public struct LocalClock: Sendable {
    public let timeZone: TimeZone

    public init(timeZone: TimeZone) { self.timeZone = timeZone }

    /// The minute of the local day (0–1439) at an instant.
    public func minuteOfDay(at instant: Instant) -> Int {
        let offset = Int64(timeZone.secondsFromGMT(for: instant.date))
        let seconds = (instant.milliseconds >= 0 ? instant.milliseconds / 1000 : (instant.milliseconds - 999) / 1000) + offset
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400 }
        return Int(secondOfDay / 60)
    }
}
