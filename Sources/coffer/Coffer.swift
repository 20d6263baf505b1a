@main struct C { static func main() {} }
