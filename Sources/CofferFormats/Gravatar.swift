import CofferCrypto
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Gravatar avatar URLs, built as Gravatar documents today (docs.gravatar.com, "Creating the hash"):
/// trim the email, lower-case it, hash it with SHA-256, and ask `https://gravatar.com/avatar/HASH`.
///
/// ```swift
/// let url = try Gravatar.avatarURL(for: "MyEmailAddress@example.com ", size: 200, default: .identicon)
/// // https://gravatar.com/avatar/84059b07d4be67b806386c0aad8070a23f18836bbaae342275dc0a83414c32ee?s=200&d=identicon
/// ```
///
/// Trimming and lower-casing follow Gravatar's PHP reference (`trim`, `strtolower`): the ASCII white
/// space `trim` removes, and ASCII letters only, so that non-ASCII addresses hash as Gravatar hashes them.
public enum Gravatar {
    /// How the email is hashed.
    public enum HashStyle: Sendable {
        /// SHA-256, as Gravatar documents today. The default.
        case sha256
        /// MD5, the original form, still served. - Warning: MD5 is broken; use only for old stored URLs.
        case insecureMD5
    }

    /// What Gravatar shows when the email has no avatar (`d=`).
    public enum DefaultImage: Sendable, Hashable {
        /// Answer HTTP 404 instead of an image.
        case notFound
        /// A simple, cartoon-style silhouette (`mp`).
        case mysteryPerson
        /// A geometric pattern derived from the hash.
        case identicon
        /// A generated monster.
        case monsterID
        /// Generated faces.
        case wavatar
        /// 8-bit arcade-style pixelated faces.
        case retro
        /// Generated robots.
        case robohash
        /// A transparent image.
        case blank
        /// An image of your own at a public `http(s)` URL.
        case custom(URL)

        /// The `d=` value for the built-in images.
        var keyword: String? {
            switch self {
            case .notFound: "404"
            case .mysteryPerson: "mp"
            case .identicon: "identicon"
            case .monsterID: "monsterid"
            case .wavatar: "wavatar"
            case .retro: "retro"
            case .robohash: "robohash"
            case .blank: "blank"
            case .custom: nil
            }
        }

        /// The built-in images by their `d=` keyword, for command lines and configuration files.
        public static let builtIn: [String: DefaultImage] = [
            "404": .notFound, "mp": .mysteryPerson, "identicon": .identicon, "monsterid": .monsterID,
            "wavatar": .wavatar, "retro": .retro, "robohash": .robohash, "blank": .blank,
        ]
    }

    /// The highest audience rating of images to serve (`r=`).
    public enum Rating: String, Sendable, CaseIterable {
        /// Suitable for all audiences.
        case g
        /// May contain rude gestures, provocatively dressed individuals, mild violence.
        case pg
        /// May contain harsh profanity, intense violence, nudity, hard drug use.
        case r
        /// May contain sexual imagery or extremely disturbing violence.
        case x
    }

    /// The sizes Gravatar serves, in pixels.
    public static let sizes = 1...2048

    /// The email normalised as Gravatar requires: ASCII white space trimmed, ASCII letters lower-cased.
    /// - Throws: ``CofferFormatsError`` `.invalidEmail` if nothing is left or there is no `@`.
    public static func normalizedEmail(_ email: String) throws(CofferFormatsError) -> String {
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0x00, 0x0B]
        var bytes = Array(email.utf8)[...]
        while let first = bytes.first, whitespace.contains(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, whitespace.contains(last) { bytes = bytes.dropLast() }
        let lowered = bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        guard !lowered.isEmpty else {
            throw CofferFormatsError(.invalidEmail, "expected an email address, found an empty string")
        }
        guard lowered.contains(UInt8(ascii: "@")) else {
            throw CofferFormatsError(.invalidEmail, "expected an email address with an '@'")
        }
        return String(decoding: lowered, as: UTF8.self)
    }

    /// The hex hash that identifies an email at Gravatar.
    public static func hash(of email: String, style: HashStyle = .sha256) throws(CofferFormatsError) -> String {
        let normalized = try normalizedEmail(email)
        return (style == .sha256 ? DigestAlgorithm.sha256 : .insecureMD5).hash(normalized).hex
    }

    /// The avatar URL for an email.
    /// - Parameters:
    ///   - email: the address; surrounding white space and letter case do not matter.
    ///   - size: square size in pixels, 1 to 2048 (`s=`); Gravatar's default is 80.
    ///   - defaultImage: what to show when there is no avatar (`d=`).
    ///   - rating: the highest rating to show (`r=`).
    ///   - forceDefault: always show the default image (`f=y`), for previews.
    ///   - style: SHA-256 (default) or the legacy MD5 form.
    /// - Throws: ``CofferFormatsError`` for an invalid email, size, or custom default image URL.
    public static func avatarURL(
        for email: String,
        size: Int? = nil,
        default defaultImage: DefaultImage? = nil,
        rating: Rating? = nil,
        forceDefault: Bool = false,
        style: HashStyle = .sha256
    ) throws(CofferFormatsError) -> URL {
        var query: [String] = []
        if let size {
            guard sizes.contains(size) else {
                throw CofferFormatsError(.invalidArgument, "expected an avatar size from 1 to 2048 pixels, found \(size)")
            }
            query.append("s=\(size)")
        }
        if let defaultImage {
            if let keyword = defaultImage.keyword {
                query.append("d=\(keyword)")
            } else if case .custom(let url) = defaultImage {
                guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
                    throw CofferFormatsError(.invalidArgument, "expected an http(s) URL for the default image")
                }
                query.append("d=\(percentEncoded(url.absoluteString))")
            }
        }
        if let rating { query.append("r=\(rating.rawValue)") }
        if forceDefault { query.append("f=y") }
        let text = "https://gravatar.com/avatar/\(try hash(of: email, style: style))"
            + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        guard let url = URL(string: text) else {
            throw CofferFormatsError(.invalidArgument, "could not form a URL from the parameters given")
        }
        return url
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters, so a URL can travel as a query value.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}
