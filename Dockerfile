FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json knexfile.ts ./
COPY migrations ./migrations
COPY src ./src
USER node
EXPOSE 3000
CMD ["npx", "tsx", "src/main.ts"]
