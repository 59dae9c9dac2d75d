//! The command line: global options (how to reach the server, how to answer it) and commands.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Reaching a server:
  mcp-client tools -- npx -y @modelcontextprotocol/server-everything
  mcp-client info -- https://example.com/mcp
  mcp-client tools --config .mcp.json              (every server of the file, as one hub)
  mcp-client call echo text=hi --config .mcp.json --server files

Exit codes: 0 success, 1 error, 2 usage, 3 connection failed, 4 tool error (isError),
5 input required (--no-input), 6 timeout, 7 authorization required.";

/// A command-line client for Model Context Protocol servers.
#[derive(Parser, Debug)]
#[command(name = "mcp-client", version, after_help = AFTER_HELP, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// The server: a command and its arguments, or one http(s):// URL (after `--`)
    #[arg(last = true, global = true, value_name = "SERVER")]
    pub server_command: Vec<String>,
    /// A host configuration file (mcpServers / servers): every server as one hub
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// With --config: only this server of the file
    #[arg(long, global = true, value_name = "NAME")]
    pub server: Option<String>,
    /// An HTTP request header, `Name: value` (repeatable)
    #[arg(short = 'H', long = "header", global = true, value_name = "HEADER")]
    pub headers: Vec<String>,
    /// A variable for the server process, `KEY=VALUE` (repeatable)
    #[arg(short = 'e', long = "env", global = true, value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// How the protocol era is chosen
    #[arg(long, global = true, value_enum, default_value_t = Mode::Auto)]
    pub mode: Mode,
    /// Seconds each request may take (0: no limit)
    #[arg(long, global = true, value_name = "SECS", default_value_t = 60.0)]
    pub timeout: f64,
    /// Seconds the connection may take to set up (0: no limit)
    #[arg(long, global = true, value_name = "SECS", default_value_t = 30.0)]
    pub connect_timeout: f64,
    /// Print exactly the result JSON (see docs/cli.md for the shapes)
    #[arg(long, global = true)]
    pub json: bool,
    /// Show the server's log messages at this level and above on stderr
    #[arg(long, global = true, value_name = "LEVEL", value_parser = LOG_LEVELS)]
    pub log_level: Option<String>,
    /// Also show the server's own stderr lines and the library's diagnostics
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Never ask at the terminal: print what the server asked and exit with code 5
    #[arg(long, global = true)]
    pub no_input: bool,
    /// How a server's sampling request is answered
    #[arg(long, global = true, value_enum, default_value_t = Sampling::Refuse)]
    pub sampling: Sampling,
    /// A directory offered to the server as a root (repeatable)
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    /// Open URL elicitations in the browser (otherwise the URL is shown)
    #[arg(long, global = true)]
    pub open: bool,
    /// Where OAuth tokens of HTTP servers are kept [default: ~/.config/mcp-client/tokens]
    #[arg(long, global = true, value_name = "DIR")]
    pub token_dir: Option<PathBuf>,
}

pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// server/discover, else initialize
    Auto,
    /// 2026-07-28 only
    Modern,
    /// initialize (2024-11-05 … 2025-11-25)
    Legacy,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Show the request and type the model's answer
    Ask,
    /// Refuse every sampling request
    Refuse,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// OpenAI Chat Completions
    Openai,
    /// OpenAI Responses
    OpenaiResponses,
    /// Anthropic Messages
    Anthropic,
    /// Gemini functionDeclarations
    Gemini,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The server's era, protocol version, implementation, capabilities and instructions
    #[command(after_help = "Example:\n  mcp-client info -- target/debug/mcp-fixture-server")]
    Info,
    /// The server's tools
    #[command(after_help = "Example:\n  mcp-client tools -- npx -y @modelcontextprotocol/server-everything")]
    Tools,
    /// Calls a tool: arguments as key=value (typed from its input schema), or --args JSON
    #[command(
        after_help = "Examples:\n  mcp-client call add a=2 b=3 -- target/debug/mcp-fixture-server\n  \
        echo '{\"text\": \"hi\"}' | mcp-client call echo --args - -- target/debug/mcp-fixture-server"
    )]
    Call(CallArgs),
    /// The server's prompts
    #[command(after_help = "Example:\n  mcp-client prompts -- target/debug/mcp-fixture-server")]
    Prompts,
    /// Gets a prompt with its arguments (key=value or --args JSON)
    #[command(after_help = "Example:\n  mcp-client prompt greeting name=Ada -- target/debug/mcp-fixture-server")]
    Prompt(CallArgs),
    /// The server's resources
    #[command(after_help = "Example:\n  mcp-client resources -- target/debug/mcp-fixture-server")]
    Resources,
    /// The server's resource templates
    #[command(after_help = "Example:\n  mcp-client templates -- target/debug/mcp-fixture-server")]
    Templates,
    /// Reads a resource
    #[command(after_help = "Example:\n  mcp-client read fixture://static -- target/debug/mcp-fixture-server")]
    Read {
        /// The resource's URI
        uri: String,
    },
    /// Completion of a prompt's or a resource template's argument
    #[command(
        after_help = "Examples:\n  mcp-client complete prompt:greeting name al -- target/debug/mcp-fixture-server\n  \
        mcp-client complete 'resource:fixture://items/{id}' id 1 -- …"
    )]
    Complete {
        /// `prompt:NAME` or `resource:URI_TEMPLATE`
        reference: String,
        /// The argument's name
        argument: String,
        /// What is typed so far
        #[arg(default_value = "")]
        value: String,
    },
    /// The server's skills (the skills extension)
    #[command(after_help = "Example:\n  mcp-client skills -- target/debug/mcp-fixture-server --skills genuine")]
    Skills,
    /// One skill: its entry, and its SKILL.md verified
    #[command(
        after_help = "Example:\n  mcp-client skill hello-world -- target/debug/mcp-fixture-server --skills genuine"
    )]
    Skill {
        /// The skill's name or its SKILL.md URI
        name: String,
    },
    /// Pings the server and shows the round trip
    #[command(after_help = "Example:\n  mcp-client ping -- target/debug/mcp-fixture-server")]
    Ping,
    /// Prints the server's notifications as they come
    #[command(after_help = "Example:\n  mcp-client listen --count 1 -- target/debug/mcp-fixture-server")]
    Listen {
        /// Stop after this many events
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Stop after this many seconds
        #[arg(long, value_name = "SECS")]
        seconds: Option<f64>,
    },
    /// The servers of --config and their state
    #[command(after_help = "Example:\n  mcp-client servers --config .mcp.json")]
    Servers,
    /// The tools in a model API's function-calling format
    #[command(after_help = "Example:\n  mcp-client export --format anthropic -- target/debug/mcp-fixture-server")]
    Export {
        /// The model API
        #[arg(long, value_enum, default_value_t = ExportFormat::Openai)]
        format: ExportFormat,
        /// OpenAI formats: strict mode where the schema allows it
        #[arg(long)]
        strict: bool,
    },
    /// An interactive shell on one connection (history, Tab completion)
    #[command(after_help = "Example:\n  mcp-client shell -- target/debug/mcp-fixture-server\n  mcp> call add a=2 b=3")]
    Shell,
    /// Authorizes with an HTTP server's OAuth in the browser; tokens go to --token-dir
    #[command(after_help = "Example:\n  mcp-client login -- https://example.com/mcp")]
    Login,
    /// Forgets the tokens stored for an HTTP server
    #[command(after_help = "Example:\n  mcp-client logout -- https://example.com/mcp")]
    Logout,
    /// Prints a shell completion script
    #[command(after_help = "Example:\n  mcp-client completions bash > /etc/bash_completion.d/mcp-client")]
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

#[derive(Args, Debug)]
pub struct CallArgs {
    /// The tool's or prompt's name
    pub name: String,
    /// Arguments as key=value; a value is typed from the input schema (number, boolean, JSON)
    #[arg(value_name = "KEY=VALUE")]
    pub pairs: Vec<String>,
    /// The arguments as a JSON object; `-` reads it from stdin
    #[arg(long, value_name = "JSON")]
    pub args: Option<String>,
}
