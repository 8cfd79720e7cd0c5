// Escaping text for markup that people open in a browser: SVG charts and HTML reports.
#ifndef ALPA_SUPPORT_MARKUP_H_
#define ALPA_SUPPORT_MARKUP_H_

#include <string>
#include <string_view>

namespace alpa {

// `text` with & < > " ' replaced by character references (&amp; &lt; &gt; &quot; &#39;): safe in
// XML and HTML text and in quoted attribute values.
std::string EscapeMarkup(std::string_view text);

}  // namespace alpa

#endif  // ALPA_SUPPORT_MARKUP_H_
