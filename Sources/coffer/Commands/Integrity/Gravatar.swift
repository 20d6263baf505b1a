import ArgumentParser
import CofferFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct GravatarCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gravatar",
        abstract: "Print the Gravatar avatar URL for an email address.",
        discussion: """
            The address is trimmed and lower-cased, then hashed with SHA-256, as Gravatar documents \
            today. --insecure-md5 gives the original MD5 form that older stored URLs use.

            Default images (--default): 404, mp, identicon, monsterid, wavatar, retro, robohash, blank, \
            or an https URL of your own.

            Examples:
              coffer gravatar MyEmailAddress@example.com --size 200
              coffer gravatar someone@example.com --default identicon --rating pg
            """
    )

    @Argument(help: "The email address.")
    var email: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Image size in pixels, 1 to 2048 (Gravatar's default is 80).", valueName: "pixels"))
    var size: Int?

    @Option(name: .customLong("default"), help: ArgumentHelp("Image to show when there is no avatar.", valueName: "kind|url"))
    var defaultImageOption: String?

    /// `-d`, the spelling before the flags became one language (docs/CLI.md: -d is request data).
    @Option(name: .customShort("d"), help: .hidden)
    var deprecatedDefaultImage: String?

    var defaultImage: String? { defaultImageOption ?? deprecatedDefaultImage }

    @Option(name: .customLong("rating"), help: ArgumentHelp("Highest rating to show: g, pg, r or x.", valueName: "rating"))
    var ratingOption: String?

    /// `-r`, the spelling before the flags became one language (docs/CLI.md: -r is a recipient).
    @Option(name: .customShort("r"), help: .hidden)
    var deprecatedRating: String?

    var rating: String? { ratingOption ?? deprecatedRating }

    func validate() throws {
        Deprecation.warn("gravatar -d", "--default", used: deprecatedDefaultImage != nil)
        Deprecation.warn("gravatar -r", "--rating", used: deprecatedRating != nil)
    }

    @Flag(help: "Always show the default image (f=y), to preview it.")
    var forceDefault = false

    @Flag(name: .customLong("insecure-md5"), help: "Use the legacy MD5 hash instead of SHA-256.")
    var insecureMD5 = false

    @Flag(help: "Print only the hash, not the URL.")
    var hashOnly = false

    func run() throws {
        let style: Gravatar.HashStyle = insecureMD5 ? .insecureMD5 : .sha256
        if hashOnly {
            Terminal.writeLine(try Gravatar.hash(of: email, style: style))
            return
        }
        let url = try Gravatar.avatarURL(
            for: email,
            size: size,
            default: try parsedDefaultImage(),
            rating: try parsedRating(),
            forceDefault: forceDefault,
            style: style
        )
        Terminal.writeLine(url.absoluteString)
    }

    private func parsedDefaultImage() throws -> Gravatar.DefaultImage? {
        guard let defaultImage else { return nil }
        if let builtIn = Gravatar.DefaultImage.builtIn[defaultImage.lowercased()] { return builtIn }
        if defaultImage.lowercased().hasPrefix("https://") || defaultImage.lowercased().hasPrefix("http://"),
            let url = URL(string: defaultImage)
        {
            return .custom(url)
        }
        let kinds = Gravatar.DefaultImage.builtIn.keys.sorted().joined(separator: ", ")
        throw CommandFailure("unknown default image '\(defaultImage)'; expected one of \(kinds), or an https URL")
    }

    private func parsedRating() throws -> Gravatar.Rating? {
        guard let rating else { return nil }
        guard let parsed = Gravatar.Rating(rawValue: rating.lowercased()) else {
            throw CommandFailure("unknown rating '\(rating)'; expected g, pg, r or x")
        }
        return parsed
    }
}
