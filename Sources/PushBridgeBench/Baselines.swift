// The baselines the decide+render figures are divided by, measured in the same run on the same payloads:
// Codable structs through JSONEncoder, and a ceiling writer that writes the finished bytes from their parts.
import Foundation
import PushBridgeJSON

/// A payload cut into what any serialiser starts from: fixed JSON text, string values, the badge.
enum PayloadSegment {
    case literal([UInt8])
    case string(String)
    case badge(Int)
}

/// Cuts a payload into segments: keys and punctuation stay literal, string values and the badge become values.
func segments(of payload: [UInt8]) -> [PayloadSegment] {
    var out: [PayloadSegment] = []
    var literal: [UInt8] = []
    var i = 0
    let badgeKey = Array(#""badge":"#.utf8)
    while i < payload.count {
        let b = payload[i]
        if b == UInt8(ascii: "\"") {
            var j = i + 1
            while payload[j] != UInt8(ascii: "\"") { j += payload[j] == UInt8(ascii: "\\") ? 2 : 1 }
            let isKey = j + 1 < payload.count && payload[j + 1] == UInt8(ascii: ":")
            if isKey {
                literal += payload[i...j]
            } else {
                if !literal.isEmpty { out.append(.literal(literal)) }
                literal = []
                guard case .string(let s) = try! JSONParser.parse(Array(payload[i...j])) else { fatalError("not a string literal") }
                out.append(.string(s))
            }
            i = j + 1
        } else if (0x30...0x39).contains(b) && literal.count >= badgeKey.count && Array(literal.suffix(badgeKey.count)) == badgeKey {
            var j = i
            var value = 0
            while j < payload.count, (0x30...0x39).contains(payload[j]) {
                value = value * 10 + Int(payload[j] - 0x30)
                j += 1
            }
            out.append(.literal(literal))
            literal = []
            out.append(.badge(value))
            i = j
        } else {
            literal.append(b)
            i += 1
        }
    }
    if !literal.isEmpty { out.append(.literal(literal)) }
    return out
}

/// The ceiling: writes a payload's finished bytes from its segments with raw pointer writes into an
/// array of the right size (what no serialiser can beat by much: copy, escape, digits).
@inline(never)
func ceilingWrite(_ parts: [PayloadSegment], capacity: Int) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
        var p = buffer.baseAddress!
        for part in parts {
            switch part {
            case .literal(let bytes):
                bytes.withUnsafeBufferPointer { src in
                    p.update(from: src.baseAddress!, count: src.count)
                    p += src.count
                }
            case .string(var s):
                p.pointee = 0x22
                p += 1
                s.withUTF8 { utf8 in
                    for b in utf8 {
                        if b >= 0x20 && b != 0x22 && b != 0x5C {
                            p.pointee = b
                            p += 1
                        } else {
                            p.pointee = 0x5C
                            switch b {
                            case 0x22: p[1] = 0x22
                            case 0x5C: p[1] = 0x5C
                            case 0x0A: p[1] = UInt8(ascii: "n")
                            case 0x0D: p[1] = UInt8(ascii: "r")
                            case 0x09: p[1] = UInt8(ascii: "t")
                            case 0x08: p[1] = UInt8(ascii: "b")
                            case 0x0C: p[1] = UInt8(ascii: "f")
                            default:
                                let hex = Array("0123456789abcdef".utf8)
                                p[1] = UInt8(ascii: "u"); p[2] = 0x30; p[3] = 0x30; p[4] = hex[Int(b >> 4)]; p[5] = hex[Int(b & 0xF)]
                                p += 4
                            }
                            p += 2
                        }
                    }
                }
                p.pointee = 0x22
                p += 1
            case .badge(let value):
                var v = value
                var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                    (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                let n = withUnsafeMutableBytes(of: &digits) { d -> Int in
                    var k = 0
                    repeat {
                        d[k] = 0x30 + UInt8(v % 10)
                        v /= 10
                        k += 1
                    } while v > 0
                    for i in 0..<k { p[i] = d[k - 1 - i] }
                    return k
                }
                p += n
            }
        }
        count = p - buffer.baseAddress!
    }
}

/// The Codable twin of a payload (every key PushBridge writes).
struct CodableAlert: Codable {
    var title: String?
    var subtitle: String?
    var body: String?
    var titleLocKey: String?
    var titleLocArgs: [String]?
    var locKey: String?
    var locArgs: [String]?
    enum CodingKeys: String, CodingKey {
        case title, subtitle, body
        case titleLocKey = "title-loc-key", titleLocArgs = "title-loc-args", locKey = "loc-key", locArgs = "loc-args"
    }
}
struct CodableAPS: Codable {
    var alert: CodableAlert
    var badge: Int?
    var sound: String?
    var category: String?
    var mutableContent: Int?
    enum CodingKeys: String, CodingKey { case alert, badge, sound, category, mutableContent = "mutable-content" }
}
struct CodableExtension: Codable {
    var orderId: String?
    var kind: Int?
}
struct CodablePayload: Codable {
    var aps: CodableAPS
    var e: CodableExtension?
    var f: String?
    var g: String?
    var m: String?
    var t: String?
    var ext: String?
}

/// The Codable value for a payload's parts.
func codable(_ payload: [UInt8]) -> CodablePayload {
    let d = try! JSONSerialization.jsonObject(with: Data(payload)) as! [String: Any]
    let aps = d["aps"] as! [String: Any]
    var alert = CodableAlert()
    if let a = aps["alert"] as? [String: Any] {
        alert = CodableAlert(title: a["title"] as? String, subtitle: a["subtitle"] as? String, body: a["body"] as? String,
            titleLocKey: a["title-loc-key"] as? String, titleLocArgs: a["title-loc-args"] as? [String], locKey: a["loc-key"] as? String,
            locArgs: a["loc-args"] as? [String])
    } else {
        alert.body = aps["alert"] as? String
    }
    let e = (d["e"] as? [String: Any]).map { CodableExtension(orderId: $0["orderId"] as? String, kind: $0["kind"] as? Int) }
    return CodablePayload(
        aps: CodableAPS(alert: alert, badge: aps["badge"] as? Int, sound: aps["sound"] as? String, category: aps["category"] as? String,
            mutableContent: aps["mutable-content"] as? Int),
        e: e, f: d["f"] as? String, g: d["g"] as? String, m: d["m"] as? String, t: d["t"] as? String, ext: d["ext"] as? String)
}

/// The process's peak resident set size so far, in megabytes.
func peakRSSMegabytes() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    #if os(Linux)
    return Double(usage.ru_maxrss) / 1024  // kilobytes
    #else
    return Double(usage.ru_maxrss) / 1024 / 1024  // bytes
    #endif
}
