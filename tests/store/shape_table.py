"""The credential shapes the redactor must catch: one table for the per-shape tests and the sink audit."""

from __future__ import annotations

PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDZq1x"
AZURE_KEY = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5QUJDRA=="

#: name -> (text, the raw value that must not survive, the marker it becomes).
SHAPES: dict[str, tuple[str, str, str]] = {
    # -- covered before --
    "email": ("mail jane.doe@example.org", "jane.doe@example.org", "[REDACTED:email]"),
    "card_grouped": ("paid 4111 1111 1111 1111", "4111 1111 1111 1111", "[REDACTED:card]"),
    "card_context": ("card number 378282246310005", "378282246310005", "[REDACTED:card]"),
    "openai": ("key sk-proj-Abc123Def456Ghi789Jkl012Mno", "sk-proj-Abc123Def456Ghi789Jkl012Mno",
               "[REDACTED:api_key]"),
    "openai_legacy": ("key sk-Abc123Def456Ghi789Jkl012", "sk-Abc123Def456Ghi789Jkl012", "[REDACTED:api_key]"),
    "anthropic": ("key sk-ant-api03-Zyx987Wvu654Tsr321Qpo098Nml", "sk-ant-api03-Zyx987Wvu654Tsr321Qpo098Nml",
                  "[REDACTED:api_key]"),
    "aws_key_id": ("id AKIAZ7Q2LMN4XYPR5TUV", "AKIAZ7Q2LMN4XYPR5TUV", "[REDACTED:api_key]"),
    "aws_temporary_key_id": ("id ASIAZ7Q2LMN4XYPR5TUV", "ASIAZ7Q2LMN4XYPR5TUV", "[REDACTED:api_key]"),
    "aws_secret": ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm3Pq2R",
                   "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm3Pq2R", "[REDACTED:api_key]"),
    "github_classic": ("tok ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
                       "[REDACTED:api_key]"),
    "github_pat": ("tok github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789",
                   "github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789", "[REDACTED:api_key]"),
    "slack_token": ("tok xoxb-2048-4096-AbCdEfGhIjKl", "xoxb-2048-4096-AbCdEfGhIjKl", "[REDACTED:api_key]"),
    "google": ("key AIzaSyD4x9Q2mN7pL1kJ8hG5fD3sA6zX0cV9bN2", "AIzaSyD4x9Q2mN7pL1kJ8hG5fD3sA6zX0cV9bN2",
               "[REDACTED:api_key]"),
    "bearer": ("Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5",
               "Bearer [REDACTED:api_key]"),
    "jwt": ("tok eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJqYW5lIn0.Qm9ndXNTaWduYXR1cmVfMTIzNDU2",
            "eyJzdWIiOiJqYW5lIn0.Qm9ndXNTaWduYXR1cmVfMTIzNDU2", "[REDACTED:jwt]"),
    "pem": (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", PEM_BODY,
            "[REDACTED:private_key]"),
    "slack_webhook": ("post https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx",
                      "T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx", "[REDACTED:webhook]"),
    "dsn_password": ("postgres://svc:Pa55!w#rd%2Fx@db.internal:5432/app", "Pa55!w#rd%2Fx",
                     "svc:[REDACTED:password]@db"),
    "configured_secret": ("pw swordfish-Quartz-42", "swordfish-Quartz-42", "[REDACTED:secret]"),
    # -- added: the shapes issue 25 found unredacted --
    "stripe_live": ("stripe sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr",
                    "[REDACTED:api_key]"),
    "stripe_restricted": ("stripe rk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "rk_live_51H8xYzAbCdEfGhIjKlMnOpQr",
                          "[REDACTED:api_key]"),
    "stripe_test": ("stripe sk_test_4eC39HqLyjWDarjtT1zdp7dc", "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
                    "[REDACTED:api_key]"),
    "azure_account_key": (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={AZURE_KEY};"
                          "EndpointSuffix=core.windows.net", AZURE_KEY, "AccountKey=[REDACTED:api_key];"),
    "azure_shared_access_key": ("Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
                                "SharedAccessKey=AbCdEf0123456789GhIjKlMnOpQrStUvWxYz+/abc=",
                                "AbCdEf0123456789GhIjKlMnOpQrStUvWxYz+/abc=", "SharedAccessKey=[REDACTED:api_key]"),
    "azure_sas_sig": ("https://acct.blob.core.windows.net/c/b?sv=2021-08-06&sr=b&sp=r&sig=Xy7%2BAbCdEfGh0123456789IjKl%3D",
                      "Xy7%2BAbCdEfGh0123456789IjKl%3D", "&sig=[REDACTED:api_key]"),
    "authorization_no_scheme": ("Authorization: 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
                                "Authorization: [REDACTED:api_key]"),
    "basic_auth": ("Authorization: Basic dXNlcjpzM2NyZXRQYXNz", "dXNlcjpzM2NyZXRQYXNz", "Basic [REDACTED:password]"),
    "x_api_key": ("X-Api-Key: a1B2c3D4e5F6g7H8i9J0k1L2", "a1B2c3D4e5F6g7H8i9J0k1L2", "X-Api-Key: [REDACTED:api_key]"),
    "gitlab_pat": ("tok glpat-xYz12AbC34dEf56GhI78jK", "glpat-xYz12AbC34dEf56GhI78jK", "[REDACTED:api_key]"),
    "huggingface": ("tok hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
                    "[REDACTED:api_key]"),
    "npm": ("tok npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "[REDACTED:api_key]"),
    "sendgrid": ("key SG.AbCdEfGhIjKlMnOpQrStUv.WxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz01234",
                 "SG.AbCdEfGhIjKlMnOpQrStUv.WxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz01234", "[REDACTED:api_key]"),
}
ADDED = ["stripe_live", "stripe_restricted", "stripe_test", "azure_account_key", "azure_shared_access_key",
         "azure_sas_sig", "authorization_no_scheme", "basic_auth", "x_api_key", "gitlab_pat", "huggingface",
         "npm", "sendgrid"]

