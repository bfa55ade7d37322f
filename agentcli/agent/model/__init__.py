"""The chat model: the OpenAI-compatible client and the quirks of other servers, streamed
answers gathered in linear time, retries, cut-off answers, token counts and prices."""
