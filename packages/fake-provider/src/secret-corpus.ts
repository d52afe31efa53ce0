// Made-up secrets in the real formats of each kind, for redaction tests (never real keys).
/** One real-format sample per kind (made-up values of the right shape). */
export const secretCorpus: ReadonlyArray<{ kind: string; text: string; secret: string }> = [
  {
    kind: "OpenAI key",
    text: "export OPENAI_KEY=sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz1234567890abcd",
    secret: "sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz1234567890abcd",
  },
  {
    kind: "OpenAI legacy key",
    text: "the key sk-4f9Xa1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWx works",
    secret: "sk-4f9Xa1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWx",
  },
  {
    kind: "Anthropic key",
    text: "ANTHROPIC: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEf",
    secret: "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEf",
  },
  {
    kind: "Google API key",
    text: "key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW in the config",
    secret: "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",
  },
  { kind: "AWS access key id", text: "aws id AKIAIOSFODNN7EXAMPLE, region eu-west-1", secret: "AKIAIOSFODNN7EXAMPLE" },
  {
    kind: "AWS secret",
    text: "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  },
  {
    kind: "GitHub token",
    text: "git clone https://ghp_A1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWxYz12@github.com/x/y",
    secret: "ghp_A1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvWxYz12",
  },
  {
    kind: "GitHub fine-grained token",
    text: "token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
    secret: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
  },
  {
    kind: "Slack token",
    text: "SLACK=xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv",
    secret: "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv",
  },
  {
    kind: "Slack webhook",
    text: "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX now",
    secret: "T0000/B0000/XXXXXXXXXXXXXXXX",
  },
  {
    kind: "Stripe key",
    text: "stripe sk_live_51HcAbCdEfGhIjKlMnOpQrStUv and pk_test_51HcAbCdEfGhIjKlMnOp",
    secret: "sk_live_51HcAbCdEfGhIjKlMnOpQrStUv",
  },
  { kind: "Stripe webhook secret", text: "whsec_AbCdEfGhIjKlMnOpQrStUvWx", secret: "whsec_AbCdEfGhIjKlMnOpQrStUvWx" },
  {
    kind: "bearer token",
    text: "curl -H 'Authorization: Bearer 9f8e7d6c5b4a3f2e1d0c.abc' https://api.example",
    secret: "9f8e7d6c5b4a3f2e1d0c.abc",
  },
  {
    kind: "JWT",
    text: "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    secret: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0",
  },
  {
    kind: "private key block",
    text: "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onL\n-----END RSA PRIVATE KEY-----",
    secret: "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo",
  },
  {
    kind: "OpenSSH key block",
    text: "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\n-----END OPENSSH PRIVATE KEY-----",
    secret: "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE",
  },
  {
    kind: "password in a URL",
    text: "DATABASE_URL=postgres://admin:hunter2pass@db.internal:5432/app",
    secret: "hunter2pass",
  },
  { kind: "password pair", text: 'config = { "password": "correct-horse-battery" }', secret: "correct-horse-battery" },
  { kind: "api_key pair", text: "api_key=Zx9Yw8Vu7Ts6Rq5Po4Nm", secret: "Zx9Yw8Vu7Ts6Rq5Po4Nm" },
  { kind: "client secret pair", text: "CLIENT_SECRET: 'q1w2e3r4t5y6u7i8'", secret: "q1w2e3r4t5y6u7i8" },
  { kind: "token in a query string", text: "GET /hook?token=abcDEF123456&user=7", secret: "abcDEF123456" },
  // The formats the first list missed (issue 14), made up in the same shapes.
  {
    kind: "Groq key",
    text: "GROQ_API_KEY=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",
    secret: "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",
  },
  {
    kind: "xAI key",
    text: "using xai-FRN2YZl7c5mG3pr4HllooXL3Gv3fgrMRcnNfzSgQGH0FRRHBKvaHrhlFberKiYdTfdbam0GQeZPc3n8f for grok",
    secret: "xai-FRN2YZl7c5mG3pr4HllooXL3Gv3fgrMRcnNfzSgQGH0FRRHBKvaHrhlFberKiYdTfdbam0GQeZPc3n8f",
  },
  {
    kind: "Hugging Face token",
    text: "huggingface-cli login --token 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",
    secret: "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",
  },
  {
    kind: "npm token",
    text: "//registry.npmjs.org/:_authToken=npm_TBAlgSh7zWQHC9JxMAOQ3gQLPNmr6VSuw5XC",
    secret: "npm_TBAlgSh7zWQHC9JxMAOQ3gQLPNmr6VSuw5XC",
  },
  { kind: "GitLab token", text: "PRIVATE-TOKEN: glpat-j6mv8ywKgp1MXfYP9Yij", secret: "glpat-j6mv8ywKgp1MXfYP9Yij" },
  {
    kind: "SendGrid key",
    text: "SENDGRID key 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",
    secret: "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",
  },
  {
    kind: "Twilio API key",
    text: "twilio api key SK1de8fa2b132d31520914c40eef092879 in use",
    secret: "SK1de8fa2b132d31520914c40eef092879",
  },
  {
    kind: "DigitalOcean token",
    text: "doctl auth init -t dop_v1_070b33cce9ba084996e02eacd8d60cf7c37768272e1069de7225be6c3bf6baf9",
    secret: "dop_v1_070b33cce9ba084996e02eacd8d60cf7c37768272e1069de7225be6c3bf6baf9",
  },
  {
    kind: "Replicate token",
    text: "REPLICATE_API_TOKEN=r8_DLnodI520Re5TiDJDhBrTfXoSXq9vLIzBNgxE",
    secret: "r8_DLnodI520Re5TiDJDhBrTfXoSXq9vLIzBNgxE",
  },
  {
    kind: "Slack app token",
    text: "xapp-1-A0E8HJ28591-2538558610044-596637c9e3c3e2716c624bf3227734ffac2b3a85ef3b1ea01c673b58d152daf6",
    secret: "596637c9e3c3e2716c624bf3227734ffac2b3a85ef3b1ea01c673b58d152daf6",
  },
  {
    kind: "Discord webhook",
    text: "post to https://discord.com/api/webhooks/862886434321438032/NZQHOOAMvrqxTC5RjPOV9IODzR0LAj20aogR8fcxPvDf4JdNtupQ977Mgl6pT7HfoZBe",
    secret: "NZQHOOAMvrqxTC5RjPOV9IODzR0LAj20aogR8fcxPvDf4JdNtupQ977Mgl6pT7HfoZBe",
  },
  {
    kind: "Telegram bot token",
    text: "bot token 9676596921:AAVEPK9McQcf7tYwYAZkP2tESFgmkNxqvhe from BotFather",
    secret: "AAVEPK9McQcf7tYwYAZkP2tESFgmkNxqvhe",
  },
  {
    kind: "password in a URL with no user name",
    text: "REDIS_URL=redis://:88z848atzdVXY3@cache.internal:6379/0",
    secret: "88z848atzdVXY3",
  },
  {
    kind: "AWS secret next to a key id",
    text: "key AKIA6QYRXLBISH77DO6B secret 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",
    secret: "GR0WZWxFalQFppIaCNKBc0TGqq11C9CGDM2YBQNm",
  },
  {
    kind: "Azure storage account key",
    text: "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=pCFY7pXfki81Y+bX/di9UFKxq/XX3ok2rAGtEfDCHqJUq+wwQqyYPQwzZmPtInik5fF5OxOwxqPqLlcnbNp+6H==;EndpointSuffix=core.windows.net",
    secret: "pCFY7pXfki81Y+bX/di9UFKxq/XX3ok2rAGtEfDCHqJUq+wwQqyYPQwzZmPtInik5fF5OxOwxqPqLlcnbNp+6H",
  },
  { kind: "password in a sentence", text: "my password is Gr33n-Tea!42, please keep it", secret: "Gr33n-Tea!42" },
];
