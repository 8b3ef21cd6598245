"""Node.js repositories (JavaScript and TypeScript): runtime, dependencies and test runners."""
