// Verdict's GraphiQL playground. Bundled by esbuild (build.mjs) into dist/graphiql.js and
// dist/graphiql.css, which the server compiles into its binary and serves from
// /graphql/assets/: the page loads nothing from any other origin.
import { createRoot } from 'react-dom/client';
import { GraphiQL } from 'graphiql';
import { createGraphiQLFetcher } from '@graphiql/toolkit';
import { getIntrospectionQuery } from 'graphql';
import 'graphiql/graphiql.css';
import './main.css';

const wsScheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';

const httpFetcher = createGraphiQLFetcher({
  url: '/graphql',
  // Subscriptions (graphql-transport-ws). The headers editor's values are merged into the
  // connection_init payload, so `{"Authorization": "Bearer ..."}` signs the socket in too.
  subscriptionUrl: `${wsScheme}//${window.location.host}/graphql/ws`,
  // The session cookie (if any) rides along same-origin; cookie-authenticated mutations
  // must carry this header (a cross-site form cannot set it).
  headers: { 'X-Verdict-Csrf': '1' },
});

// GraphiQL's introspection query follows type wrappers 9 levels deep, which the server's
// depth limit (10 by default, counted from `__schema`) refuses. Four levels are enough for
// every type in the schema up to `[[T!]!]` (args sit deepest: __schema > types > fields >
// args > type > 4 x ofType > name = 10), so the schema fetch swaps in that TypeRef fragment.
const TYPE_REF = /fragment TypeRef on __Type \{[\s\S]*$/;
const SHALLOW_TYPE_REF = getIntrospectionQuery({ typeDepth: 4 }).match(TYPE_REF)[0];

function fetcher(params, opts) {
  if (params.operationName === 'IntrospectionQuery' && TYPE_REF.test(params.query)) {
    params = { ...params, query: params.query.replace(TYPE_REF, SHALLOW_TYPE_REF) };
  }
  return httpFetcher(params, opts);
}

const DEFAULT_QUERY = `# Welcome to the Verdict GraphQL playground.
#
# Anonymous callers see public data. To act as a user, sign in with the \`logIn\`
# mutation and paste the token into the Headers tab below:
#   { "Authorization": "Bearer <token>" }
#
# Run with Ctrl+Enter; the Docs button (top left) browses the schema.

query Gallery {
  events(first: 10) {
    totalCount
    edges {
      node {
        slug
        name
        projects(first: 5) {
          totalCount
          edges { node { title team { name } track { name } } }
        }
      }
    }
  }
}
`;

// Open the docs explorer on a first visit; afterwards GraphiQL remembers the user's choice.
let firstVisit = true;
try {
  firstVisit = window.localStorage.getItem('graphiql:visiblePlugin') === null;
} catch {
  // storage disabled: keep the default
}

function App() {
  return (
    <GraphiQL
      fetcher={fetcher}
      defaultQuery={DEFAULT_QUERY}
      isHeadersEditorEnabled
      defaultEditorToolsVisibility="headers"
      shouldPersistHeaders={false}
      visiblePlugin={firstVisit ? 'Documentation Explorer' : undefined}
    >
      <GraphiQL.Logo>Verdict</GraphiQL.Logo>
    </GraphiQL>
  );
}

createRoot(document.getElementById('graphiql')).render(<App />);
